// One self-contained HTML file: no external assets, an SVG timeline per scenario.
// Every string from an observation is untrusted and goes through escapeXml.
import {
  type EdgePicture,
  type GradeResult,
  objectUidOf,
  type PairResult,
  runKeyOf,
  type TimelineBar,
  type Verdict,
} from '../grade/types.ts';
import {
  escapeXml as e,
  formatExits,
  graceCaption,
  predictionShown,
  predictionsCount,
  seconds,
  supersededLabel,
  supersededText,
  tryName,
} from './format.ts';
import { LAB_PAIR_ROLES } from '../scenario/schema.ts';
import { type ChartBar, edgePictureCaption, edgePictureRows } from './edge.ts';
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
  kill: '#7a0000',
  terminated: '#222',
  deleted: '#777',
  effect: '#8250df',
};
const ROWS: TimelineBar['kind'][] = ['request', 'grace', 'hook', 'term', 'kill', 'terminated'];
/** Rows named as the student guide names them. */
const ROW_NAME: Record<TimelineBar['kind'], string> = {
  request: 'request',
  grace: 'grace',
  hook: 'preStop hook',
  term: 'SIGTERM',
  kill: 'SIGKILL',
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

/** A text's width in the SVG, estimated from its characters: a wide sans-serif averages about 0.6 of its size. */
export const textWidth = (text: string, size: number) => text.length * size * 0.6;
const LABEL_SIZE = 10,
  ROW_SIZE = 11,
  TICK_SIZE = 10,
  /** A row's own height, and what each further line of labels adds to it. */
  ROW_H = 26,
  TIER_H = 14,
  /** A heading's line in a pair's chart: the name of the pod whose rows follow. */
  HEAD_H = 20,
  GAP = 4;

/** What a row draws: its shapes at the row's top line, and its labels, each on the first line of the row where it overlaps none. */
interface Placed {
  shape: (y: number) => string;
  /** The shape's span on the row's top line, in x: a label on that line keeps clear of it. */
  spans: [number, number];
  label: { x: number; text: string } | null;
  /** A point's diamond, drawn over the row's bars. */
  mark: boolean;
}

/** Each label's line in its row: the first from the top where its box meets no other label's, nor on the top line a shape. */
export function tiersOf(labels: { x: number; text: string }[], shapes: [number, number][]): number[] {
  const lines: [number, number][][] = [[...shapes]];
  const order = labels.map((_, i) => i).sort((a, b) => labels[a]!.x - labels[b]!.x);
  const tiers: number[] = [];
  for (const i of order) {
    const { x, text } = labels[i]!;
    const box: [number, number] = [x - GAP, x + textWidth(text, LABEL_SIZE) + GAP];
    let tier = lines.findIndex((line) => line.every(([a, b]) => box[1] <= a || b <= box[0]));
    if (tier < 0) tier = lines.push([]) - 1;
    lines[tier]!.push(box);
    tiers[i] = tier;
  }
  return tiers;
}

/** A name cut to fit `room` pixels at `size`, with an ellipsis. */
const cutToFit = (name: string, room: number, size: number) => {
  const chars = Math.floor(room / (size * 0.6));
  return name.length <= chars ? name : `${name.slice(0, Math.max(1, chars - 1))}…`;
};

const drawnBars = (r: GradeResult) => r.timeline.filter((b) => Number.isFinite(b.start) && Number.isFinite(b.end));

/** The span a chart's axis needs: from the delete or its first bar to a second past the kill or its last bar. */
function spanOf(r: GradeResult): { min: number; max: number } {
  const bars = drawnBars(r);
  return {
    min: Math.min(0, ...bars.map((b) => b.start)),
    max: Math.max((r.prediction?.killAt ?? 0) + 1, ...bars.map((b) => b.end)),
  };
}

/** Each lab pair of each run with its halves, in the report's order: a superseded try forms none, as in pairs.ts. */
function labPairs(results: GradeResult[]): { id: string; halves: GradeResult[]; axis: { min: number; max: number } }[] {
  const byPair = new Map<string, { id: string; halves: GradeResult[] }>();
  for (const r of results) {
    if (!r.labPair || r.rollout || r.supersededBy || !drawnBars(r).length) continue;
    const key = `${runKeyOf(r)}\0${r.labPair.id}`;
    const pair = byPair.get(key) ?? { id: r.labPair.id, halves: [] };
    pair.halves.push(r);
    byPair.set(key, pair);
  }
  return [...byPair.values()]
    .filter((p) => p.halves.length > 1)
    .map((p) => {
      // In the lesson's order: the short grace before the restored one, whatever the files' order.
      p.halves.sort((a, b) => LAB_PAIR_ROLES.indexOf(a.labPair!.role) - LAB_PAIR_ROLES.indexOf(b.labPair!.role));
      // One axis, the widest both need.
      const spans = p.halves.map(spanOf);
      return { ...p, axis: { min: Math.min(...spans.map((s) => s.min)), max: Math.max(...spans.map((s) => s.max)) } };
    });
}

/** Both pods of a lab pair on one chart, origin the delete, each with its caption: the pair compares by eye. */
function pairFigure(pair: { id: string; halves: GradeResult[]; axis: { min: number; max: number } }): string {
  const names = pair.halves.map(tryName);
  const svg = svgRows(
    pair.halves.flatMap(halfRows),
    pair.axis,
    `timeline of lab pair ${pair.id}: ${names.join(' and ')}`,
  );
  const captions = pair.halves
    .map((r) =>
      graceCaption(r) ? `<p class="caption"><strong>${e(tryName(r))}</strong>: ${e(graceCaption(r))}</p>` : '',
    )
    .join('');
  return `<figure class="card pair"><h2>Lab pair ${e(pair.id)}: ${e(names.join(' and '))} on one time axis</h2>
  <p class="muted">Run ${e(pair.halves[0]!.runId)}. Time 0 is each pod's delete. The kubelet's grace runs from when it began; the hook eats into it; SIGTERM comes with what is left, SIGKILL when that runs out.</p>
  ${svg}<figcaption>${captions}</figcaption></figure>`;
}

/** A chart's row: its name and bars, or a heading that names the pod of the rows below it (a pair's chart). */
interface Row {
  name: string;
  bars: ChartBar[];
  heading?: boolean;
}

/** A scenario's own chart: one row per kind; in a pod with a sidecar, request and grace, then one lane per container. */
function rowsOf(bars: TimelineBar[]): Row[] {
  const lanes = [...new Set(bars.flatMap((b) => (b.lane ? [b.lane] : [])))];
  return lanes.length
    ? [
        ...(['request', 'grace'] as const)
          .map((kind) => ({ name: ROW_NAME[kind], bars: bars.filter((b) => b.kind === kind && !b.lane) }))
          .filter((row) => row.bars.length),
        ...lanes.map((lane) => ({ name: lane, bars: bars.filter((b) => b.lane === lane) })),
      ]
    : ROWS.map((kind) => ({ name: ROW_NAME[kind], bars: bars.filter((b) => b.kind === kind) }));
}

/**
 * One half of a pair's chart: its name, then a pod of one container in two rows (the kubelet's budget with the
 * hook drawn over it, TERM and KILL; the request), or a pod with lanes in its own chart's rows.
 */
function halfRows(r: GradeResult): Row[] {
  const bars = drawnBars(r);
  const heading = { name: tryName(r), bars: [], heading: true };
  if (bars.some((b) => b.lane)) return [heading, ...rowsOf(bars)];
  const kubelet: TimelineBar['kind'][] = ['grace', 'hook', 'term', 'kill'];
  return [
    heading,
    { name: 'kubelet', bars: bars.filter((b) => kubelet.includes(b.kind)) },
    { name: ROW_NAME.request, bars: bars.filter((b) => !kubelet.includes(b.kind)) },
  ];
}

function svgTimeline(r: GradeResult, axis: { min: number; max: number } = spanOf(r)): string {
  const bars = drawnBars(r);
  if (!bars.length) return '<p class="muted">No timeline: the pod was never deleted.</p>';
  return svgRows(rowsOf(bars), axis, `timeline of ${r.scenario}`);
}

function svgRows(rows: Row[], axis: { min: number; max: number }, aria: string): string {
  const { min, max } = axis;
  // The row names' column is as wide as the longest name needs, up to a third of the chart; longer ones are cut.
  const plot = 560;
  const left = Math.min(
    280,
    Math.max(
      110,
      8 + GAP * 3 + Math.max(...rows.filter((row) => !row.heading).map((row) => textWidth(row.name, ROW_SIZE))),
    ),
  );
  // Times so far from 0 that a second is lost in their rounding still get an axis, not a division by zero.
  const span = max - min || 1;
  const x = (s: number) => left + ((s - min) / span) * plot;
  const placed = rows.map(({ bars: inRow }) =>
    inRow.map((bar): Placed => {
      const kind = bar.kind;
      // Each mark's times, to the millisecond, for a reader's tools and the tests that hold the text to the chart.
      const at = ` data-t="${bar.start.toFixed(3)} ${bar.end.toFixed(3)}"`;
      const title = `<title>${e(bar.label)}: ${bar.start.toFixed(2)}s → ${bar.end.toFixed(2)}s (${e(bar.source)})</title>`;
      if (bar.start === bar.end) {
        const cx = x(bar.start);
        return {
          mark: true,
          spans: [cx - 7, cx + 7],
          shape: (y) =>
            `<g${at}><path d="M${cx} ${y + 2} l7 8 l-7 8 l-7 -8 z" fill="${bar.color ?? COLORS[kind]}"/>${title}</g>`,
          label: { x: cx + 12, text: bar.label },
        };
      }
      const dash = bar.source === 'inferred' || bar.source === 'model' ? ' stroke-dasharray="4 3" stroke="#555"' : '';
      return {
        mark: false,
        spans: [x(bar.start), x(bar.start) + Math.max(2, x(bar.end) - x(bar.start))],
        shape: (y) =>
          `<g${at}><rect x="${x(bar.start)}" y="${y + 2}" width="${Math.max(2, x(bar.end) - x(bar.start))}" height="16" rx="3" fill="${bar.color ?? COLORS[kind]}"${dash}/>${title}</g>`,
        // Beside the bar, never inside it: a short bar would cut its own label.
        label: { x: x(bar.end) + GAP, text: bar.label },
      };
    }),
  );
  const tiers = placed.map((items) => {
    const labelled = items.filter((p) => p.label);
    const t = tiersOf(
      labelled.map((p) => p.label!),
      items.map((p) => p.spans),
    );
    return new Map(labelled.map((p, i) => [p, t[i]!]));
  });
  const rowTop: number[] = [];
  let top = 28;
  tiers.forEach((t, row) => {
    rowTop.push(top);
    top += rows[row]!.heading ? HEAD_H : ROW_H + TIER_H * Math.max(0, ...t.values());
  });
  const height = top + 12;
  const labelsRight = Math.max(
    0,
    ...placed.flat().map((p) => (p.label ? p.label.x + textWidth(p.label.text, LABEL_SIZE) : 0)),
  );
  const width = Math.max(820, Math.ceil(labelsRight) + 8);
  const parts: string[] = [];
  // At most MAX_TICKS lines whatever the span: the report's size follows the file's, not its times.
  const step = tickStep(max - min);
  let tickRight = -Infinity;
  // Counted, not stepped: where a step is lost in the rounding of its time, i++ would not move it.
  const firstTick = Math.ceil(min / step);
  for (let k = 0; k <= MAX_TICKS + 1 && (firstTick + k) * step <= max; k++) {
    const s = (firstTick + k) * step;
    const major = step > 1 || s % 5 === 0;
    parts.push(
      `<line x1="${x(s)}" x2="${x(s)}" y1="10" y2="${height - 24}" stroke="${s === 0 ? '#d33' : '#eee'}" stroke-width="${s === 0 ? 1.5 : 1}"/>`,
    );
    const text = `${formatTick(s)}s`;
    const half = textWidth(text, TICK_SIZE) / 2;
    // A tick's number only where it clears the last one drawn.
    if ((major || max - min < 12) && x(s) - half >= tickRight + GAP) {
      parts.push(`<text x="${x(s)}" y="${height - 8}" class="tick">${text}</text>`);
      tickRight = x(s) + half;
    }
  }
  parts.push(`<text x="${x(0) + GAP}" y="20" class="delete">delete</text>`);
  rows.forEach(({ name, heading }, row) => {
    const y = rowTop[row]!;
    if (heading) {
      parts.push(`<text x="8" y="${y + 14}" class="half">${e(name)}</text>`);
      return;
    }
    const shown = cutToFit(name, left - 8 - GAP * 2, ROW_SIZE);
    const text = `<text x="8" y="${y + 14}" class="row">${e(shown)}</text>`;
    parts.push(shown === name ? text : `<g>${text}<title>${e(name)}</title></g>`);
    // Bars first, marks over them: a hook drawn over the grace, a kill's diamond over the grace's end.
    const items = placed[row]!;
    for (const p of [...items.filter((q) => !q.mark), ...items.filter((q) => q.mark)]) {
      parts.push(p.shape(y));
      if (p.label)
        parts.push(
          `<text x="${p.label.x}" y="${y + 14 + TIER_H * tiers[row]!.get(p)!}" class="label">${e(p.label.text)}</text>`,
        );
    }
  });
  return `<svg viewBox="0 0 ${width} ${height}" width="100%" role="img" aria-label="${e(aria)}">${parts.join('')}</svg>`;
}

/** An edge scenario's one failed request through the edge, drawn from its own sources, with its caption. */
/** `id`: the figure's anchor, for a link (and docs/img/edge-timeline.png's screenshot) to go straight to it. */
function edgeFigure(r: GradeResult, id: string): string {
  const p = r.kind === 'rollout' ? r.edge?.picture : null;
  return p ? edgePictureHtml(p, id) : '';
}

/** The picture of one failed request through the edge and its caption: the lab's report and verify's. */
export function edgePictureHtml(p: EdgePicture, id: string): string {
  const { rows, axis } = edgePictureRows(p);
  return `<h3 id="${e(id)}">One failed request through the edge</h3>${svgRows(rows, axis, `timeline of request ${p.request.id} through the edge`)}
  <p class="caption">${e(edgePictureCaption(p))}</p>`;
}

function rolloutCard(r: GradeResult, anchor: string): string {
  const ro = r.rollout!;
  const table = (header: string[], rows: string[][]) =>
    `<table><tr>${header.map((h) => `<th>${e(h)}</th>`).join('')}</tr>${rows.map((row) => `<tr>${row.map((c) => `<td>${e(c)}</td>`).join('')}</tr>`).join('')}</table>`;
  return `<p class="muted">Model (from each old pod's live lifecycle): requests failing ${e(ro.exposure)}; ${e(ro.steps.join('; '))}</p>
  <p>${ro.requests.failed} of ${ro.requests.total} requests failed, ${ro.requests.oldFailed} at old pods. Template before: <code>${e(ro.templateBefore)}</code>; after: <code>${e(ro.templateAfter)}</code>.</p>${edgeFigure(r, `${anchor}-edge`)}
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
.card{border:1px solid #e1e4e8;border-radius:8px;padding:1rem 1.2rem;margin:1.2rem 0}figure.pair{margin:1.2rem 0}
.v-matches-model{border-left:6px solid #2da44e}.v-differs-from-model{border-left:6px solid #cf222e}
.v-inconclusive{border-left:6px solid #d4a72c}.v-evidence-invalid{border-left:6px solid #6e7781}
.muted{color:#6e7781}.pass{color:#1a7f37}.fail{color:#cf222e}.inconclusive{color:#9a6700}
svg .tick{font-size:10px;fill:#888;text-anchor:middle}svg .row{font-size:11px;fill:#555}
svg .label{font-size:10px;fill:#333}svg .half{font-size:11px;font-weight:600;fill:#1d1d1f}svg .label.on{fill:#fff}svg .delete{font-size:10px;fill:#d33}
.caption{margin:.2rem 0 .6rem;font-size:.95em}details.terms{margin:-.6rem 0 .6rem;font-size:.9em}details.terms summary{color:#6e7781;cursor:pointer}code{background:#f6f8fa;padding:0 .25rem;border-radius:3px}
.badge{display:inline-block;font-size:.75rem;font-weight:600;padding:.1rem .5rem;border-radius:1rem;vertical-align:middle;white-space:nowrap}
.b-matches-model{background:#dafbe1;color:#116329}.b-differs-from-model{background:#ffebe9;color:#a40e26}
.b-inconclusive{background:#fff8c5;color:#7d4e00}.b-evidence-invalid{background:#eaeef2;color:#424a53}`;

function predictionBadge(r: GradeResult): string {
  const p = predictionShown(r);
  if (!p) return '';
  const cls = p.right === true ? 'b-matches-model' : p.right === false ? 'b-differs-from-model' : 'b-inconclusive';
  return ` <span class="badge ${cls}" title="your prediction">prediction ${e(p.text)}</span>`;
}

/**
 * The model's steps in the kubelet's own terms, one click away from the lab's words, with where they are explained:
 * `docs` is the docs folder as the report links to it (relative to the report), or none to name the page alone.
 */
function kubeletTerms(r: GradeResult, docs: string | undefined): string {
  const terms = r.prediction?.terms ?? [];
  if (!terms.length) return '';
  const page = 'docs/grading.md, “The kubelet’s terms”';
  const link = docs ? `<a href="${e(docs)}/grading.md#the-kubelets-terms">${page}</a>` : page;
  return `<details class="terms"><summary>In the kubelet's terms</summary><ul>${terms.map((t) => `<li><code>${e(t)}</code></li>`).join('')}</ul><p class="muted">What these names mean: ${link}.</p></details>`;
}

/** One card per result: verdict, explanation, timeline and checks; anchors start with `prefix`; `docs` as kubeletTerms. */
export function resultCards(results: GradeResult[], prefix = 's', docs?: string): string {
  const axes = new Map(labPairs(results).flatMap((p) => p.halves.map((r) => [r, p.axis] as const)));
  return results
    .map(
      (r, i) => `
<section class="card v-${r.supersededBy ? 'inconclusive' : r.verdict}" id="${prefix}${i}-${e(r.scenario)}">
  <h2>${e(tryName(r))} ${verdictBadge(r)}${predictionBadge(r)}</h2>
  <p>${e(r.supersededBy ? supersededText(r) : r.explanation)}</p>${r.notes.map((n) => `<p class="muted">Note: ${e(n)}</p>`).join('')}
  ${
    r.rollout
      ? rolloutCard(r, `${prefix}${i}-${r.scenario}`)
      : `<p class="muted">Model: ${e(r.prediction?.steps.join('; ') ?? '')}</p>
  ${kubeletTerms(r, docs)}
  ${svgTimeline(r, axes.get(r))}${graceCaption(r) ? `<p class="caption">${e(graceCaption(r))}</p>` : ''}`
  }
  <details><summary>${r.checks.length} checks</summary><table><tr><th>check</th><th>status</th><th>reason</th></tr>
  ${r.checks.map((c) => `<tr><td><code>${e(c.id)}</code></td><td class="${c.status}">${c.status}</td><td>${e(c.reason)}</td></tr>`).join('')}
  </table><p class="muted">${r.kind === 'pod' ? 'pod' : 'deployment'} ${e(objectUidOf(r) ?? 'unknown')} · run ${e(r.runId)} · ${e(r.source)}</p></details>
</section>`,
    )
    .join('');
}

/** `docs`: the docs folder relative to where the report is written, for its links (write.ts). */
export function renderHtml(
  results: GradeResult[],
  pairs: PairResult[] = [],
  problems: string[] = [],
  docs?: string,
): string {
  const count = predictionsCount(results.filter((x) => !x.supersededBy));
  const predicted = count !== null;
  // Anchors carry the index: one report may hold the same scenario from several files.
  const rows = results
    .map(
      (r, i) =>
        `<tr><td><a href="#s${i}-${e(r.scenario)}">${e(tryName(r))}</a></td><td>${e(r.mode)}</td><td>${e(r.preStop)}</td><td>${r.graceSeconds}s</td><td>${seconds(r.workMs)}</td><td>${e(r.outcome)}</td><td>${e(formatExits(r))}</td><td>${verdictBadge(r)}</td>${predicted ? `<td>${e(predictionShown(r)?.text ?? '')}</td>` : ''}</tr>`,
    )
    .join('');
  const cards = resultCards(results, 's', docs);
  const pairCharts = labPairs(results).map(pairFigure).join('');
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
${pairHtml}${pairCharts}${problemHtml}${cards}
</body></html>
`;
}
