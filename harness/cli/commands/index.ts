// Every subcommand, as the CLI lists them. Each is a light Command object; its module is imported
// only when it runs, so `termlab X` loads X alone.
import type { CommandModule } from '../../../lib/command.ts';
import type { Command } from '../command.ts';
import type { SimHandle, SimStartOptions } from '../../run/command.ts';
import { classCommand } from './class.ts';
import { grade } from './grade.ts';
import { pack } from './pack.ts';
import { predict } from './predict.ts';
import { reap } from './reap.ts';
import { runCommand } from './run.ts';
import { scenarios } from './scenarios.ts';
import { schema } from './schema.ts';
import { simCommand, type simFlags } from './sim.ts';
import { verifyCommand } from './verify.ts';
import { version } from './version.ts';

/** What the CLI's one door to cluster/sim gives. */
export interface SimModule {
  simCommand: CommandModule<typeof simFlags>;
  startSimCluster(options: {
    kubeVersion?: string;
    featureGates?: string;
    proxy?: { syncDelayMs: number };
    edge?: boolean;
  }): Promise<SimHandle>;
}

export function createCommands(loadSim: () => Promise<SimModule>): Command[] {
  const startSim = async (options: SimStartOptions) =>
    (await loadSim()).startSimCluster({
      kubeVersion: options.kubeVersion,
      featureGates: options.featureGates,
      ...(options.proxySyncDelayMs === undefined ? {} : { proxy: { syncDelayMs: options.proxySyncDelayMs } }),
      ...(options.edge ? { edge: true } : {}),
    });
  return [
    runCommand(startSim),
    scenarios,
    grade,
    reap,
    schema,
    simCommand(loadSim),
    pack,
    predict,
    classCommand,
    verifyCommand(startSim),
    version,
  ];
}
