// A rollout's part of the reports: the template beside each pod's live lifecycle, the pods'
// timeline, and the requests over time coloured by outcome (SVG in HTML, a text strip elsewhere).
// Strings from an observation are untrusted: the callers' escapers are applied to every one.
import type { RolloutSection } from '../grade/types.ts';

type Escape = (value: unknown) => string;

const OUTCOME_COLOR: Record<string, string> = {
  completed: '#2da44e',
  'draining (503)': '#e0a526',
  'refused after TERM': '#cf222e',
  'unanswered after TERM': '#a40e26',
  'cut at TERM': '#8250df',
  'cut by SIGKILL': '#1d1d1f',
  cut: '#6e40c9',
  'timed out': '#9a6700',
  'http error': '#bc4c00',
  unattributed: '#8c959f',
};
const colorOf = (outcome: string) => OUTCOME_COLOR[outcome] ?? '#8c959f';
/** Seconds per column of the requests plot. */
const BUCKET_SECONDS = 0.5;
const fmt = (s: number | null) => (s === null ? '—' : `${s.toFixed(1)}s`);

export function lifecycleRows(r: RolloutSection): { pod: string; revision: string; template: string; live: string }[] {
  return r.pods.map((p) => ({
    pod: p.name,
    revision: p.revision ?? '?',
    template: p.template ?? '—',
    // Never the template in its place: a pod without a read says so.
    live: p.live ?? (p.ended === null && p.term === null ? 'not terminated' : 'not captured'),
  }));
}

function buckets(r: RolloutSection): { start: number; counts: Map<string, number> }[] {
  if (!r.points.length) return [];
  const min = Math.floor(Math.min(...r.points.map((p) => p.t)) / BUCKET_SECONDS);
  const max = Math.floor(Math.max(...r.points.map((p) => p.t)) / BUCKET_SECONDS);
  const out = Array.from({ length: max - min + 1 }, (_, i) => ({
    start: (min + i) * BUCKET_SECONDS,
    counts: new Map<string, number>(),
  }));
  for (const p of r.points) {
    const b = out[Math.floor(p.t / BUCKET_SECONDS) - min]!;
    b.counts.set(p.outcome, (b.counts.get(p.outcome) ?? 0) + 1);
  }
  return out;
}

export function requestsSvg(r: RolloutSection, e: Escape): string {
  const cols = buckets(r);
  if (!cols.length) return '<p class="muted">No requests were recorded.</p>';
  const width = 760,
    left = 40,
    right = 10,
    height = 170,
    top = 10,
    bottom = 30;
  const peak = Math.max(...cols.map((c) => [...c.counts.values()].reduce((a, b) => a + b, 0)));
  const t0 = cols[0]!.start,
    t1 = cols.at(-1)!.start + BUCKET_SECONDS;
  const x = (t: number) => left + ((t - t0) / (t1 - t0)) * (width - left - right);
  const y = (n: number) => top + (1 - n / peak) * (height - top - bottom);
  const parts: string[] = [];
  const order = ['completed', ...Object.keys(OUTCOME_COLOR).filter((k) => k !== 'completed')];
  for (const c of cols) {
    let base = 0;
    for (const outcome of [...order, ...[...c.counts.keys()].filter((k) => !order.includes(k))]) {
      const n = c.counts.get(outcome) ?? 0;
      if (!n) continue;
      parts.push(
        `<rect x="${x(c.start).toFixed(1)}" y="${y(base + n).toFixed(1)}" width="${Math.max(1, x(c.start + BUCKET_SECONDS) - x(c.start) - 0.5).toFixed(1)}" height="${(y(base) - y(base + n)).toFixed(1)}" fill="${colorOf(outcome)}"><title>${e(outcome)}: ${n} at ${c.start.toFixed(1)}s</title></rect>`,
      );
      base += n;
    }
  }
  for (const p of r.pods)
    if (p.term !== null && p.term >= t0 && p.term <= t1)
      parts.push(
        `<line x1="${x(p.term).toFixed(1)}" x2="${x(p.term).toFixed(1)}" y1="${top}" y2="${height - bottom}" stroke="#cf222e" stroke-dasharray="3 3"><title>TERM ${e(p.name)}</title></line>`,
      );
  const step = Math.max(1, Math.ceil((t1 - t0) / 20));
  for (let t = Math.ceil(t0 / step) * step; t <= t1; t += step)
    parts.push(`<text x="${x(t).toFixed(1)}" y="${height - 12}" class="tick">${t}s</text>`);
  parts.push(
    `<text x="4" y="${top + 10}" class="row">${peak}</text><text x="4" y="${height - bottom}" class="row">0</text>`,
  );
  const legend = Object.entries(r.causes)
    .map(([c, n]) => `<span style="color:${colorOf(c)}">■</span> ${e(c)} ${n}`)
    .join(' · ');
  return `<svg viewBox="0 0 ${width} ${height}" width="100%" role="img" aria-label="requests over time">${parts.join('')}</svg><p class="muted">Requests per ${BUCKET_SECONDS}s by the time they were sent (0 = the template change); dashed lines: an old pod's TERM. <span style="color:${colorOf('completed')}">■</span> completed${legend ? ` · ${legend}` : ''}</p>`;
}

export function podsSvg(r: RolloutSection, e: Escape): string {
  const pods = r.pods.filter((p) => p.created !== null);
  if (!pods.length) return '';
  const times = pods
    .flatMap((p) => [p.created, p.ready, p.endpointRemoved, p.term, p.ended])
    .filter((t): t is number => t !== null);
  const t0 = Math.min(...times),
    t1 = Math.max(...times) + 1;
  const width = 760,
    left = 170,
    right = 10,
    rowH = 22,
    height = pods.length * rowH + 30;
  const x = (t: number) => left + ((t - t0) / (t1 - t0)) * (width - left - right);
  const parts: string[] = [];
  pods.forEach((p, i) => {
    const yy = 8 + i * rowH;
    const end = p.ended ?? t1;
    parts.push(`<text x="4" y="${yy + 13}" class="row">${e(p.name.slice(-22))} (${e(p.revision ?? '?')})</text>`);
    parts.push(
      `<rect x="${x(p.created!).toFixed(1)}" y="${yy + 3}" width="${Math.max(2, x(end) - x(p.created!)).toFixed(1)}" height="12" rx="2" fill="${p.revision === 'old' ? '#c9d6ea' : '#dafbe1'}"/>`,
    );
    const mark = (t: number | null, color: string, label: string) => {
      if (t !== null)
        parts.push(
          `<g><rect x="${(x(t) - 1.5).toFixed(1)}" y="${yy}" width="3" height="18" fill="${color}"/><title>${label} ${t.toFixed(2)}s</title></g>`,
        );
    };
    mark(p.ready, '#2da44e', 'Ready');
    mark(p.endpointRemoved, '#2f6fdf', 'endpoint removed');
    mark(p.term, '#cf222e', 'TERM');
    mark(p.ended, '#1d1d1f', `ended${p.exitCode !== null ? ` (exit ${p.exitCode})` : ''}`);
  });
  const step = Math.max(1, Math.ceil((t1 - t0) / 20));
  for (let t = Math.ceil(t0 / step) * step; t <= t1; t += step)
    parts.push(`<text x="${x(t).toFixed(1)}" y="${height - 6}" class="tick">${t}s</text>`);
  return `<svg viewBox="0 0 ${width} ${height}" width="100%" role="img" aria-label="pods over time">${parts.join('')}</svg><p class="muted">Each pod from created to ended; marks: <span style="color:#2da44e">Ready</span>, <span style="color:#2f6fdf">endpoint removed</span>, <span style="color:#cf222e">TERM</span>, ended.</p>`;
}

/** One character per second: · all completed, ✗ some failed, blank none sent. */
export function requestsStrip(r: RolloutSection): string {
  if (!r.points.length) return '(no requests recorded)';
  const min = Math.floor(Math.min(...r.points.map((p) => p.t)));
  const max = Math.floor(Math.max(...r.points.map((p) => p.t)));
  const cells = Array.from({ length: max - min + 1 }, () => ({ sent: 0, failed: 0 }));
  for (const p of r.points) {
    const c = cells[Math.floor(p.t) - min]!;
    c.sent++;
    if (p.outcome !== 'completed') c.failed++;
  }
  const strip = cells.map((c) => (c.sent === 0 ? ' ' : c.failed ? '✗' : '·')).join('');
  const failedSeconds = cells
    .map((c, i) => ({ ...c, t: min + i }))
    .filter((c) => c.failed)
    .map((c) => `${c.t}s: ${c.failed}/${c.sent}`);
  return `${min}s ${strip} ${max}s${failedSeconds.length ? `\nfailed (second: failed/sent): ${failedSeconds.join(', ')}` : ''}`;
}

export function timelineRows(r: RolloutSection): string[][] {
  return r.pods.map((p) => [
    p.name,
    p.revision ?? '?',
    fmt(p.created),
    fmt(p.ready),
    fmt(p.endpointRemoved),
    fmt(p.term),
    fmt(p.ended),
    p.exitCode === null ? '—' : String(p.exitCode),
    String(p.failed),
  ]);
}
export const TIMELINE_HEADER = [
  'pod',
  'revision',
  'created',
  'Ready',
  'endpoint removed',
  'TERM',
  'ended',
  'exit',
  'failed requests',
];
