// Progress: one live line per scenario on a terminal; plain lines on phase changes elsewhere (CI).
import type { Phase } from './scenario.ts';

export interface Progress {
  phase(scenario: string, phase: Phase, detail?: string): void;
  stop(): void;
}

export function createProgress(names: string[], write: (text: string) => void, isTTY: boolean): Progress {
  const started = performance.now();
  const state = new Map(names.map((n) => [n, { phase: 'creating' as Phase, since: started, detail: '' }]));
  const width = Math.max(...names.map((n) => n.length));
  const elapsed = (since: number) => `${((performance.now() - since) / 1000).toFixed(1)}s`;
  if (!isTTY) {
    return {
      phase(scenario, phase, detail) {
        write(`[${elapsed(started)}] ${scenario.padEnd(width)}  ${phase}${detail ? `: ${detail}` : ''}\n`);
      },
      stop() {},
    };
  }
  let drawn = false;
  const icon = (p: Phase) => (p === 'done' ? '✔' : p === 'failed' ? '✘' : '…');
  const draw = () => {
    const lines = names.map((n) => {
      const s = state.get(n)!;
      return `\x1b[2K ${icon(s.phase)} ${n.padEnd(width)}  ${s.phase.padEnd(18)} ${elapsed(started)}${s.detail ? `  ${s.detail.slice(0, 60)}` : ''}`;
    });
    write(`${drawn ? `\x1b[${names.length}A` : ''}${lines.join('\n')}\n`);
    drawn = true;
  };
  const timer = setInterval(draw, 250);
  draw();
  return {
    phase(scenario, phase, detail) {
      state.set(scenario, { phase, since: performance.now(), detail: detail ?? '' });
    },
    stop() { clearInterval(timer); draw(); },
  };
}
