import { parseArgs } from 'node:util';
import type { Command } from '../command.ts';
import { predict } from '../grade/theory.ts';
import { podDeadlineSeconds } from '../safety/deadline.ts';
import { loadScenarios } from './load.ts';
import { describeSetup } from './setup.ts';

// The model's answer (and the descriptions, which state it) stay hidden until --reveal, so a
// student's prediction is reasoned rather than copied.
export const scenariosCommand: Command = {
  name: 'scenarios',
  summary: "list the scenarios' setups (the kubelet model's answer only with --reveal)",
  usage: 'termlab scenarios [--scenarios FILE] [--only a,b] [--reveal] [--json]',
  async run(argv, io) {
    const { values } = parseArgs({ args: argv, strict: true, options: { scenarios: { type: 'string' }, only: { type: 'string' }, json: { type: 'boolean' }, reveal: { type: 'boolean' } } });
    const scenarios = await loadScenarios(values.scenarios, values.only?.split(',').map((s) => s.trim()).filter(Boolean));
    if (values.json) {
      const rows = values.reveal
        ? scenarios.map((s) => ({ scenario: s, prediction: predict(s), deadlineSeconds: podDeadlineSeconds(s) }))
        : scenarios.map(({ description: _hidden, ...s }) => ({ scenario: s }));
      io.out(JSON.stringify(rows, null, 2) + '\n');
      return 0;
    }
    for (const s of scenarios) {
      io.out(`${s.name}  (${describeSetup(s)})\n`);
      if (!values.reveal) continue;
      const p = predict(s);
      if (s.description) io.out(`    ${s.description}\n`);
      io.out(`    model: ${p.outcome}, exit ${p.exitCode} — ${p.steps.join('; ')}\n\n`);
    }
    if (!values.reveal) io.out('\nPredict each outcome first: `termlab predict`. `termlab scenarios --reveal` shows the model\'s answers.\n');
    return 0;
  },
};
