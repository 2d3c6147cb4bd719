// One self-contained HTML file: no external assets, an SVG timeline per scenario.
// Every string from an observation is untrusted and goes through escapeXml.
import { type GradeResult, objectUidOf, type PairResult, type TimelineBar, type Verdict } from '../grade/types.ts';
import {
  escapeXml as e,
  formatExit,
  predictionShown,
  predictionsCount,
  seconds,
  supersededLabel,
  supersededText,
  tryName,
} from './format.ts';
import { lifecycleRows, podsSvg, requestsSvg, TIMELINE_HEADER, timelineRows } from './rollout.ts';

// Text badges, not emoji: they render the same without an emoji font.
const BADGE: Record<Verdict, string> = {
  'matches-model': 'matches the model',
  'differs-from-model': 'differs from the model',
  inconclusive: 'inconclusive',
  'evidence-invalid': 'evidence invalid',
};
export const badge = (v: Verdict) => `<span class="badge b-${v}">${BADGE[v]}</span>`;
/** A try that ran again is no verdict: it says so instead. */
const verdictBadge = (r: GradeResult) =>
  r.supersededBy ? `<span class="badge b-inconclusive">${e(supersededLabel(r))}</span>` : badge(r.verdict);

const COLORS: Record<TimelineBar['kind'], string> = {
  request: '#2f6fdf',
  grace: '#c9d6ea',
  hook: '#e0a526',
  term: '#d9480f',
  terminated: '#222',
  deleted: '#777',
  effect: '#8250df',
};
const ROWS: TimelineBar['kind'][] = ['request', 'grace', 'hook', 'term', 'terminated'];
/** Rows named as the student guide names them. */
const ROW_NAME: Record<TimelineBar['kind'], string> = {
  request: 'request',
  grace: 'grace',
  hook: 'preStop hook',
  term: 'SIGTERM',
  terminated: 'terminated',
  deleted: 'deleted',
  effect: 'effect',
};

const MAX_TICKS = 60;

/** Whole seconds between ticks: 1, 2, 5, 10, 20, 50… so that at most MAX_TICKS fit the span. */
export function tickStep(span: number): number {
  let step = 1;
  for (let decade = 1; ; decade *= 10) {
    for (const m of [1, 2, 5]) {
      step = m * decade;
      if (span / step <= MAX_TICKS || !Number.isFinite(span)) return step;
    }
  }
}
const formatTick = (s: number) => (Math.abs(s) >= 1e6 ? s.toExponential(1) : String(s));

function svgTimeline(r: GradeResult): string {
  const bars = r.timeline.filter((b) => Number.isFinite(b.start) && Number.isFinite(b.end));
  if (!bars.length) return '<p class="muted">No timeline: the pod was never deleted.</p>';
  const min = Math.min(0, ...bars.map((b) => b.start));
  const max = Math.max((r.prediction?.killAt ?? 0) + 1, ...bars.map((b) => b.end));
  // Room on the right for the label of a marker at the very end.
  // One row per kind; in a pod with a sidecar, request and grace, then one lane per container.
  const lanes = [...new Set(bars.flatMap((b) => (b.lane ? [b.lane] : [])))];
  const rows: { name: string; bars: TimelineBar[] }[] = lanes.length
    ? [
        ...(['request', 'grace'] as const)
          .map((kind) => ({ name: ROW_NAME[kind], bars: bars.filter((b) => b.kind === kind && !b.lane) }))
          .filter((row) => row.bars.length),
        ...lanes.map((lane) => ({ name: lane, bars: bars.filter((b) => b.lane === lane) })),
      ]
    : ROWS.map((kind) => ({ name: ROW_NAME[kind], bars: bars.filter((b) => b.kind === kind) }));
  const width = 820,
    left = lanes.length ? 200 : 110,
    right = 150,
    rowH = 26,
    height = rows.length * rowH + 40;
  const x = (s: number) => left + ((s - min) / (max - min)) * (width - left - right);
  const parts: string[] = [];
  // At most MAX_TICKS lines whatever the span: the report's size follows the file's, not its times.
  const step = tickStep(max - min);
  for (let i = Math.ceil(min / step); i * step <= max; i++) {
    const s = i * step;
    const major = step > 1 || s % 5 === 0;
    parts.push(
      `<line x1="${x(s)}" x2="${x(s)}" y1="10" y2="${height - 24}" stroke="${s === 0 ? '#d33' : '#eee'}" stroke-width="${s === 0 ? 1.5 : 1}"/>`,
    );
    if (major || max - min < 12)
      parts.push(`<text x="${x(s)}" y="${height - 8}" class="tick">${formatTick(s)}s</text>`);
  }
  parts.push(`<text x="${x(0) + 4}" y="20" class="delete">delete</text>`);
  rows.forEach(({ name, bars: inRow }, row) => {
    const y = 28 + row * rowH;
    parts.push(`<text x="8" y="${y + 14}" class="row">${e(name)}</text>`);
    for (const bar of inRow) {
      const kind = bar.kind;
      const title = `<title>${e(bar.label)}: ${bar.start.toFixed(2)}s → ${bar.end.toFixed(2)}s (${e(bar.source)})</title>`;
      if (bar.start === bar.end) {
        const cx = x(bar.start);
        parts.push(
          `<g><path d="M${cx} ${y + 2} l7 8 l-7 8 l-7 -8 z" fill="${COLORS[kind]}"/>${title}</g><text x="${cx + 10}" y="${y + 14}" class="label">${e(bar.label)}</text>`,
        );
      } else {
        const dash = bar.source === 'inferred' || bar.source === 'model' ? ' stroke-dasharray="4 3" stroke="#555"' : '';
        parts.push(
          `<g><rect x="${x(bar.start)}" y="${y + 2}" width="${Math.max(2, x(bar.end) - x(bar.start))}" height="16" rx="3" fill="${COLORS[kind]}"${dash}/>${title}</g>`,
        );
        // Beside the bar, never inside it: a short bar would cut its own label.
        parts.push(`<text x="${x(bar.end) + 4}" y="${y + 14}" class="label">${e(bar.label)}</text>`);
      }
    }
  });
  return `<svg viewBox="0 0 ${width} ${height}" width="100%" role="img" aria-label="timeline of ${e(r.scenario)}">${parts.join('')}</svg>`;
}

function rolloutCard(r: GradeResult): string {
  const ro = r.rollout!;
  const table = (header: string[], rows: string[][]) =>
    `<table><tr>${header.map((h) => `<th>${e(h)}</th>`).join('')}</tr>${rows.map((row) => `<tr>${row.map((c) => `<td>${e(c)}</td>`).join('')}</tr>`).join('')}</table>`;
  return `<p class="muted">Model (from each old pod's live lifecycle): requests failing ${e(ro.exposure)}; ${e(ro.steps.join('; '))}</p>
  <p>${ro.requests.failed} of ${ro.requests.total} requests failed, ${ro.requests.oldFailed} at old pods. Template before: <code>${e(ro.templateBefore)}</code>; after: <code>${e(ro.templateAfter)}</code>.</p>
  <h3>Template vs live lifecycle</h3>${table(
    ['pod', 'revision', 'its template', 'live pod (read as it terminated)'],
    lifecycleRows(ro).map((x) => [x.pod, x.revision, x.template, x.live]),
  )}
  <h3>Requests over time</h3>${requestsSvg(ro, e)}
  <h3>Pods</h3>${podsSvg(ro, e)}${table(TIMELINE_HEADER, timelineRows(ro))}`;
}

export const STYLE = `
body{font:14px/1.45 system-ui,-apple-system,Segoe UI,sans-serif;margin:2rem auto;max-width:960px;color:#1d1d1f;padding:0 1rem}
h1{font-size:1.6rem;margin-bottom:.2rem}table{border-collapse:collapse;width:100%;margin:1rem 0}
th,td{text-align:left;padding:.35rem .5rem;border-bottom:1px solid #e5e5e5;vertical-align:top}th{background:#f6f7f9}
.card{border:1px solid #e1e4e8;border-radius:8px;padding:1rem 1.2rem;margin:1.2rem 0}
.v-matches-model{border-left:6px solid #2da44e}.v-differs-from-model{border-left:6px solid #cf222e}
.v-inconclusive{border-left:6px solid #d4a72c}.v-evidence-invalid{border-left:6px solid #6e7781}
.muted{color:#6e7781}.pass{color:#1a7f37}.fail{color:#cf222e}.inconclusive{color:#9a6700}
svg .tick{font-size:10px;fill:#888;text-anchor:middle}svg .row{font-size:11px;fill:#555}
svg .label{font-size:10px;fill:#333}svg .label.on{fill:#fff}svg .delete{font-size:10px;fill:#d33}
code{background:#f6f8fa;padding:0 .25rem;border-radius:3px}
.badge{display:inline-block;font-size:.75rem;font-weight:600;padding:.1rem .5rem;border-radius:1rem;vertical-align:middle;white-space:nowrap}
.b-matches-model{background:#dafbe1;color:#116329}.b-differs-from-model{background:#ffebe9;color:#a40e26}
.b-inconclusive{background:#fff8c5;color:#7d4e00}.b-evidence-invalid{background:#eaeef2;color:#424a53}`;

function predictionBadge(r: GradeResult): string {
  const p = predictionShown(r);
  if (!p) return '';
  const cls = p.right === true ? 'b-matches-model' : p.right === false ? 'b-differs-from-model' : 'b-inconclusive';
  return ` <span class="badge ${cls}" title="your prediction">prediction ${e(p.text)}</span>`;
}

/** One card per result: verdict, explanation, timeline and checks; anchors start with `prefix`. */
export function resultCards(results: GradeResult[], prefix = 's'): string {
  return results
    .map(
      (r, i) => `
<section class="card v-${r.supersededBy ? 'inconclusive' : r.verdict}" id="${prefix}${i}-${e(r.scenario)}">
  <h2>${e(tryName(r))} ${verdictBadge(r)}${predictionBadge(r)}</h2>
  <p>${e(r.supersededBy ? supersededText(r) : r.explanation)}</p>${r.notes.map((n) => `<p class="muted">Note: ${e(n)}</p>`).join('')}
  ${
    r.rollout
      ? rolloutCard(r)
      : `<p class="muted">Model: ${e(r.prediction?.steps.join('; ') ?? '')}</p>
  ${svgTimeline(r)}`
  }
  <details><summary>${r.checks.length} checks</summary><table><tr><th>check</th><th>status</th><th>reason</th></tr>
  ${r.checks.map((c) => `<tr><td><code>${e(c.id)}</code></td><td class="${c.status}">${c.status}</td><td>${e(c.reason)}</td></tr>`).join('')}
  </table><p class="muted">${r.kind === 'pod' ? 'pod' : 'deployment'} ${e(objectUidOf(r) ?? 'unknown')} · run ${e(r.runId)} · ${e(r.source)}</p></details>
</section>`,
    )
    .join('');
}

export function renderHtml(results: GradeResult[], pairs: PairResult[] = [], problems: string[] = []): string {
  const count = predictionsCount(results.filter((x) => !x.supersededBy));
  const predicted = count !== null;
  // Anchors carry the index: one report may hold the same scenario from several files.
  const rows = results
    .map(
      (r, i) =>
        `<tr><td><a href="#s${i}-${e(r.scenario)}">${e(tryName(r))}</a></td><td>${e(r.mode)}</td><td>${e(r.preStop)}</td><td>${r.graceSeconds}s</td><td>${seconds(r.workMs)}</td><td>${e(r.outcome)}</td><td>${e(formatExit(r.exitCode, r.reason))}</td><td>${verdictBadge(r)}</td>${predicted ? `<td>${e(predictionShown(r)?.text ?? '')}</td>` : ''}</tr>`,
    )
    .join('');
  const cards = resultCards(results);
  const pairHtml = pairs
    .flatMap((p) =>
      p.checks.map(
        (c) =>
          `<p><strong>Lab pair ${e(p.pairId)}</strong>: <span class="${c.status}">${c.status}</span> — ${e(c.reason)}</p>`,
      ),
    )
    .join('');
  const problemHtml = problems.length
    ? `<h2>Files that could not be graded</h2><ul>${problems.map((p) => `<li>${e(p)}</li>`).join('')}</ul>`
    : '';
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>termlab report</title><style>${STYLE}</style></head><body>
<h1>termlab report</h1><p class="muted">${results.length} observation(s) graded. Time 0 is the delete; bars come from the harness clock, dashed ones from the model or inferred.</p>
<table><tr><th>scenario</th><th>mode</th><th>preStop</th><th>grace</th><th>work</th><th>outcome</th><th>exit</th><th>verdict</th>${predicted ? '<th>your prediction</th>' : ''}</tr>${rows}</table>
${count ? `<p><strong>${e(count)}</strong> (a prediction is right when it agrees with the kubelet model)</p>` : ''}
${pairHtml}${problemHtml}${cards}
</body></html>
`;
}
