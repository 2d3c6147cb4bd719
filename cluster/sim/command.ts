// `termlab sim`: the simulated cluster in the foreground until Ctrl-C.
import { mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import type { Command } from '../../harness/command.ts';
import { writeFileAtomic } from '../../harness/files.ts';
import { startSimCluster } from './index.ts';

export const simCommand: Command = {
  name: 'sim',
  summary: 'run the simulated cluster in the foreground (Ctrl-C stops it and every process it started)',
  usage: 'termlab sim [--port N] [--kubeconfig-out FILE]',
  async run(argv, io) {
    const { values } = parseArgs({ args: argv, strict: true, options: { port: { type: 'string' }, 'kubeconfig-out': { type: 'string' } } });
    const port = values.port === undefined ? 0 : Number(values.port);
    if (!Number.isInteger(port) || port < 0 || port > 65535) throw new TypeError(`--port: expected 0-65535, got ${values.port}`);
    const sim = await startSimCluster({ port });
    const out = resolve(values['kubeconfig-out'] ?? '.termlab/sim.kubeconfig');
    mkdirSync(dirname(out), { recursive: true });
    await writeFileAtomic(out, sim.kubeconfig);
    io.out(`simulated cluster listening on ${sim.server}\nkubeconfig: ${out} (context ${sim.context})\n  export KUBECONFIG=${out}\nCtrl-C to stop.\n`);
    await new Promise<void>((done) => {
      if (io.signal.aborted) done();
      io.signal.addEventListener('abort', () => done(), { once: true });
    });
    await sim.stop();
    io.out('simulated cluster stopped\n');
    return 0;
  },
};
