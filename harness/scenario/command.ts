import { parseArgs } from 'node:util';
import type { Command } from '../command.ts';
import { predict } from '../grade/theory.ts';
import { podDeadlineSeconds } from '../safety/deadline.ts';
import { loadScenarios } from './load.ts';
import { describePreStop } from './schema.ts';

export const scenariosCommand: Command = {
  name: 'scenarios',
  summary: "list the scenarios with the kubelet model's prediction for each",
  usage: 'termlab scenarios [--scenarios FILE] [--only a,b] [--json]',
  async run(argv, io) {
    const { values } = parseArgs({ args: argv, strict: true, options: { scenarios: { type: 'string' }, only: { type: 'string' }, json: { type: 'boolean' } } });
    const scenarios = await loadScenarios(values.scenarios, values.only?.split(',').map((s) => s.trim()).filter(Boolean));
    const rows = scenarios.map((s) => ({ scenario: s, prediction: predict(s), deadlineSeconds: podDeadlineSeconds(s) }));
    if (values.json) { io.out(JSON.stringify(rows, null, 2) + '\n'); return 0; }
    for (const { scenario: s, prediction: p } of rows) {
      io.out(`${s.name}  (${s.mode}, preStop ${describePreStop(s.preStop)}, grace ${s.terminationGracePeriodSeconds}s, work ${s.workMs / 1000}s, delete after ${s.deleteDelayMs / 1000}s)\n`);
      if (s.description) io.out(`    ${s.description}\n`);
      io.out(`    model: ${p.outcome}, exit ${p.exitCode} — ${p.steps.join('; ')}\n\n`);
    }
    return 0;
  },
};
