// Progress: one live line per scenario on a terminal; elsewhere (a pipe, a CI log) one line per scenario finished,
// plus what it waits for, so the table is not buried under every phase of every scenario.
import { secondsLeftOf } from '../safety/deadline.ts';
import type { Phase } from './scenario.ts';

export interface Progress {
  phase(scenario: string, phase: Phase, detail?: string): void;
  /** A line about the whole run (the API being away), not one scenario. */
  notice(text: string): void;
  stop(): void;
}

/** What progress shows of a scenario: its name and its objects' deadline (seconds from the start). */
export interface ProgressItem {
  name: string;
  deadlineSeconds: number;
}

export function createProgress(
  scenarios: ProgressItem[],
  write: (text: string) => void,
  isTTY: boolean,
  verbose = false,
  /** A real cluster: its leftovers outlive termlab, and `termlab reap` is what removes them (the simulated one ends with the run). */
  reapable = true,
): Progress {
  const names = scenarios.map((s) => s.name);
  const started = performance.now();
  const startedWall = Date.now();
  const state = new Map(
    names.map((n) => [n, { phase: 'creating' as Phase, detail: '', endedAt: null as number | null }]),
  );
  const width = Math.max(...names.map((n) => n.length));
  const elapsed = (since: number) => `${((performance.now() - since) / 1000).toFixed(1)}s`;
  if (!isTTY) {
    const finished = new Set<string>();
    const waitingFor = new Map<string, string>();
    return {
      phase(scenario, phase, detail) {
        if (verbose) write(`[${elapsed(started)}] ${scenario.padEnd(width)}  ${phase}${detail ? `: ${detail}` : ''}\n`);
        else if (phase === 'done' || phase === 'failed') {
          finished.add(scenario);
          write(
            `[${elapsed(started)}] ${scenario.padEnd(width)}  ${phase}${detail ? `: ${detail}` : ''} (${finished.size} of ${names.length} finished)\n`,
          );
        } else if (detail && waitingFor.get(scenario) !== detail) {
          // A phase with something to say (a wait for quota room): once, not on every step.
          waitingFor.set(scenario, detail);
          write(`[${elapsed(started)}] ${scenario.padEnd(width)}  ${phase}: ${detail}\n`);
        }
      },
      notice(text) {
        write(`[${elapsed(started)}] ${text}\n`);
      },
      stop() {},
    };
  }
  let drawnLines = 0;
  let notice = '';
  const icon = (p: Phase) => (p === 'done' ? '✔' : p === 'failed' ? '✘' : '…');
  const draw = () => {
    const lines = names.map((n) => {
      const s = state.get(n)!;
      const finished = s.endedAt !== null;
      // Time left before the pod's own deadline ends it: the same function the reaper uses.
      const left = finished
        ? ''
        : `  pod deadline in ${Math.ceil(secondsLeftOf(scenarios.find((x) => x.name === n)!.deadlineSeconds, startedWall))}s`;
      return `\x1b[2K ${icon(s.phase)} ${n.padEnd(width)}  ${s.phase.padEnd(18)} ${(((s.endedAt ?? performance.now()) - started) / 1000).toFixed(1)}s${left}${s.detail ? `  ${s.detail.slice(0, 60)}` : ''}`;
    });
    if (notice) lines.push(`\x1b[2K ${notice}`);
    write(`${drawnLines ? `\x1b[${drawnLines}A` : ''}${lines.join('\n')}\n`);
    drawnLines = lines.length;
  };
  // Said once, above the table: what the countdown on each line counts down to.
  write(
    `pod deadline in Ns: should termlab stop before it cleans up, the scenario's pods end without it after Ns (their activeDeadlineSeconds${reapable ? ', or `termlab reap` past their expiry' : ''})\n`,
  );
  const timer = setInterval(draw, 250);
  draw();
  return {
    phase(scenario, phase, detail) {
      const ended = phase === 'done' || phase === 'failed' ? performance.now() : null;
      state.set(scenario, { phase, detail: detail ?? '', endedAt: ended });
    },
    // The notice line stays once shown (kept as the last word on the API), so the count never shrinks.
    notice(text) {
      notice = text;
    },
    stop() {
      clearInterval(timer);
      draw();
    },
  };
}
