import type { CommandModule } from '../../lib/command.ts';
import { formatted, isData } from '../../lib/output-format.ts';
import { predictScenario as predict } from '../grade/pod-theory.ts';
import { otherSide } from '../grade/stop-signal.ts';
import type { Scenario } from './schema.ts';
import { describeRetries, predictRetries } from '../grade/retry-theory.ts';
import { podDeadlineSeconds } from '../safety/deadline.ts';
import type { scenariosFlags } from './flags.ts';
import { loadScenarioSet, onlyNames } from './load.ts';
import { describeRollout } from './rollout.ts';
import { describeEdge, type EdgeScenario } from './edge.ts';
import { edgeModelInput, predictEdge } from '../grade/edge/theory.ts';
import { rulesFor } from '../grade/theory.ts';
import { describeSetup } from './setup.ts';

// The model's answer (and the descriptions, which state it) stay hidden until --reveal, so a
// student's prediction is reasoned rather than copied.
// The command as the CLI shows and parses it is harness/cli/commands/scenarios.ts.
export const scenariosCommand: CommandModule<typeof scenariosFlags> = {
  async run(values, _positionals, io) {
    const set = await loadScenarioSet(values.scenarios, onlyNames(values.only));
    if (set.kind === 'rollout') {
      // A rollout's answer comes from the old pods' live lifecycle, known only once they run: nothing to hide.
      if (isData(values.output))
        io.out(
          formatted(
            set.scenarios.map((s) => ({ scenario: s })),
            values.output,
          ),
        );
      else
        for (const s of set.scenarios)
          io.out(`${s.name}  (rollout: ${describeRollout(s)})\n${s.description ? `    ${s.description}\n` : ''}`);
      return 0;
    }
    if (set.kind === 'edge') {
      // The edge model's answer follows from the file: hidden until --reveal, as a pod scenario's.
      const answer = (s: EdgeScenario) => predictEdge(edgeModelInput(s, rulesFor(null).rules));
      if (isData(values.output))
        io.out(
          formatted(
            set.scenarios.map(({ description, ...s }) =>
              values.reveal
                ? { scenario: { ...s, description }, prediction: answer({ ...s, description }) }
                : { scenario: s },
            ),
            values.output,
          ),
        );
      else
        for (const s of set.scenarios) {
          io.out(`${s.name}  (edge: ${describeEdge(s)})\n`);
          if (!values.reveal) continue;
          if (s.description) io.out(`    ${s.description}\n`);
          const p = answer(s);
          io.out(`    model: failures ${p.failures}\n`);
          for (const e of p.expectations) io.out(`      ${e.cause}: ${e.exposure} — ${e.why}\n`);
          io.out('\n');
        }
      if (!values.reveal)
        io.out(
          "\nPredict which requests fail and why first. `termlab scenarios --reveal` shows the edge model's answers.\n",
        );
      return 0;
    }
    const scenarios = set.scenarios;
    if (isData(values.output)) {
      const rows = values.reveal
        ? scenarios.map((s) => ({
            scenario: s,
            prediction: predict(s),
            ...(s.stopSignal ? { otherSide: gateFlipped(s) } : {}),
            ...(s.retry ? { retries: predictRetries(s, predict(s).outcome) } : {}),
            deadlineSeconds: podDeadlineSeconds(s),
          }))
        : scenarios.map(({ description: _hidden, ...s }) => ({ scenario: s }));
      io.out(formatted(rows, values.output));
      return 0;
    }
    for (const s of scenarios) {
      io.out(`${s.name}  (${describeSetup(s)})\n`);
      if (!values.reveal) continue;
      const p = predict(s);
      if (s.description) io.out(`    ${s.description}\n`);
      io.out(`    model: ${p.outcome}, exit ${p.exitCode} — ${p.steps.join('; ')}\n`);
      // A stopSignal: the model's answer with the gate the other way too (which side runs is the cluster's).
      const flipped = s.stopSignal ? gateFlipped(s) : null;
      if (flipped) io.out(`    ${flipped.stopSignal!.note}: ${flipped.outcome}, exit ${flipped.exitCode}\n`);
      // A pod with a sidecar: every container's hook, TERM, kill and end.
      for (const c of p.pod?.containers ?? [])
        io.out(
          `    ${c.name} (${c.role === 'app' ? 'app' : c.native ? 'native sidecar' : 'regular container'}): ${c.hookEndsAt === null ? '' : `hook ends ${c.hookEndsAt.toFixed(1)}s, `}TERM ${c.termAt.toFixed(1)}s, SIGKILL ${c.killAt.toFixed(1)}s, exits ${c.exitCode} at ${c.exitAt.toFixed(1)}s\n`,
        );
      // A retry scenario: each attempt, the pod it lands on, and what the ledger counts.
      if (s.retry) {
        io.out(`    ${describeRetries(predictRetries(s, p.outcome))}\n`);
      }
      io.out('\n');
    }
    if (!values.reveal)
      io.out(
        "\nPredict each outcome first: `termlab predict`. `termlab scenarios --reveal` shows the model's answers.\n",
      );
    return 0;
  },
};

/** The model's answer for a stopSignal scenario with its gate the other way from the minor's default. */
function gateFlipped(s: Scenario) {
  const assumed = predict(s).stopSignal;
  return assumed ? predict(s, null, undefined, null, undefined, otherSide(assumed)) : null;
}
