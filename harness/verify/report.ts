// A verification's reports: the terminal summary, Markdown that fits a CI job summary, HTML with a
// picture (requests over time per pod by outcome; each pod's deletion, TERM, KILL and endpoint
// changes on the same axis) and JUnit. Every string from the file is escaped by harness/report's helpers.
import { parseLoadLog } from '../grade/rollout/records.ts';
import { escapeXml as x } from '../report/format.ts';
import { edgePictureHtml, STYLE, tickStep, tiersOf } from '../report/html.ts';
import { edgePictureCaption } from '../report/edge.ts';
import { cell } from '../report/markdown.ts';
import { escapeTerminal as t } from '../../lib/terminal.ts';
import { type PodTimes, timeOriginOf } from './facts.ts';
import { CAUSES, type CauseNumber, ownCauseApplies, type VerifyGrade } from './grade.ts';
import { causeText, edgeFindingOf, edgeSummaryLines } from './edge-report.ts';
import type { VerificationObservation } from '../observation/verification.ts';

const VERDICT = { pass: '✅ pass', fail: '❌ fail', inconclusive: '⚠️ inconclusive' } as const;
/** A time in seconds: to a tenth in the Markdown and the terminal, to the 10 ms the chart is held to in the HTML. */
const secs = (v: number | null, digits = 1) => (v === null ? '—' : `${v.toFixed(digits)}s`);
/** verify's own causes, counted over the failures they stand for (through an edge, those it did not decide). */
const causeLines = (g: VerifyGrade) => {
  const count = { 1: 0, 2: 0, 3: 0, 4: 0 } as Record<CauseNumber, number>;
  for (const f of g.failures) if (ownCauseApplies(g.edge, edgeFindingOf(g, f.id) ?? undefined)) count[f.cause]++;
  return ([1, 2, 3, 4] as CauseNumber[]).filter((c) => count[c]).map((c) => `cause ${c} (${CAUSES[c]}): ${count[c]}`);
};
const FAILED_SHOWN = 20;

export function terminalSummary(g: VerifyGrade): string {
  const lines = [
    `${VERDICT[g.verdict]}  deployment/${t(g.deployment)} (${t(g.namespace)}), ${t(g.action)}: ${t(g.explanation)}`,
    ...causeLines(g).map((l) => `  ${l}`),
    ...edgeSummaryLines(g).map((l) => `  ${t(l)}`),
    ...g.failures
      .slice(0, 5)
      .map((f) => `    ${t(f.id)} at ${f.sent.toFixed(1)}s ${t(f.errorCode ?? f.outcome)} → ${t(causeText(g, f))}`),
    ...(g.failures.length > 5 ? [`    … ${g.failures.length - 5} more in the reports`] : []),
    ...g.advice.map((a) => `  advice: ${t(a)}`),
    ...g.reasoning.map((r) => `    because ${t(r)}`),
    `  ${t(g.scope)}`,
    ...g.problems.map((p) => `  problem: ${t(p)}`),
  ];
  return lines.join('\n') + '\n';
}

function podRow(p: PodTimes, digits = 1): string[] {
  return [
    p.name,
    p.old ? 'old' : 'new',
    p.preStop,
    secs(p.deletion, digits),
    secs(p.endpointNotReady, digits),
    secs(p.term, digits),
    p.termSource ?? '—',
    secs(p.exited, digits),
    p.exitCode === null ? '—' : String(p.exitCode),
    secs(p.gone, digits),
  ];
}
const POD_HEADER = [
  'pod',
  'revision',
  'live preStop',
  'deleted',
  'endpoint not ready',
  'TERM',
  'TERM from',
  'exited',
  'exit',
  'gone',
];

export function renderVerifyMarkdown(g: VerifyGrade): string {
  const row = (cells: string[]) => `| ${cells.map(cell).join(' | ')} |`;
  const table = (header: string[], rows: string[][]) =>
    [row(header), `|${header.map(() => ' --- |').join('')}`, ...rows.map(row)].join('\n');
  return [
    `## termlab verify: ${VERDICT[g.verdict]} deployment/${cell(g.deployment)}`,
    '',
    `${cell(g.action)} in namespace ${cell(g.namespace)}: ${cell(g.explanation)}.`,
    '',
    ...(g.failed
      ? [
          table(
            ['cause', 'failed requests'],
            ([1, 2, 3, 4] as CauseNumber[])
              .filter((c) => g.byCause[c])
              .map((c) => [`${c}: ${CAUSES[c]}`, String(g.byCause[c])]),
          ),
          '',
        ]
      : []),
    ...(g.edge
      ? [
          ...edgeSummaryLines(g).map((l) => `- ${cell(l)}`),
          '',
          ...(g.edge.picture
            ? [`One failed request through the edge: ${cell(edgePictureCaption(g.edge.picture))}`, '']
            : []),
        ]
      : []),
    ...(g.advice.length
      ? [
          '**Advice**',
          '',
          ...g.advice.map((a) => `- ${cell(a)}`),
          '',
          ...g.reasoning.map((r) => `- because ${cell(r)}`),
          '',
        ]
      : []),
    `Times in seconds from the ${cell(g.action)}.`,
    '',
    table(
      POD_HEADER,
      g.pods.map((p) => podRow(p)),
    ),
    '',
    ...(g.failures.length
      ? [
          table(
            ['request', 'sent', 'error', 'pod', 'cause', 'why'],
            g.failures
              .slice(0, FAILED_SHOWN)
              .map((f) => [
                f.id,
                `${f.sent.toFixed(1)}s`,
                f.errorCode ?? f.outcome,
                f.pod ?? '—',
                String(f.cause),
                g.edge ? causeText(g, f) : f.why,
              ]),
          ),
          ...(g.failures.length > FAILED_SHOWN
            ? ['', `… and ${g.failures.length - FAILED_SHOWN} more (the HTML report and the observation have them all)`]
            : []),
          '',
        ]
      : []),
    `_${cell(g.scope)}_`,
    '',
  ].join('\n');
}

/** Each request's sent and ended, in seconds from the action, to the millisecond: the chart and the HTML's tables. */
function requestTimes(o: VerificationObservation) {
  const origin = timeOriginOf(o);
  return parseLoadLog(o.evidence.loadLog).records.map((r) => ({
    record: r,
    sent: (Date.parse(r.sent.time) - origin) / 1000,
    ended: (Date.parse(r.ended.time) - origin) / 1000,
  }));
}

/** The picture: one row per pod, requests as marks coloured by outcome, the pod's moments on the same axis. */
export function verifySvg(g: VerifyGrade, o: VerificationObservation): string {
  const requests = requestTimes(o);
  const failedPod = new Map(g.failures.map((f) => [f.id, f.pod]));
  const pods = [...g.pods].sort((a, b) => Number(b.old) - Number(a.old) || (a.created ?? 0) - (b.created ?? 0));
  const rowOf = new Map<string, number>();
  pods.forEach((p, i) => {
    rowOf.set(p.uid, i);
    rowOf.set(p.name, i);
  });
  const unknownRow = pods.length;
  const sent = requests.map((r) => r.sent);
  const moments = pods
    .flatMap((p) => [p.deletion, p.term, p.exited, p.endpointNotReady, p.gone])
    .filter((v): v is number => v !== null);
  const lo = Math.floor(Math.min(0, ...sent.slice(0, 1), ...moments));
  const hi = Math.ceil(Math.max(1, ...sent.slice(-1), ...requests.slice(-1).map((r) => r.ended), ...moments));
  const left = 210,
    width = 900,
    rowH = 22,
    top = 20,
    tierH = 10;
  const X = (s: number) => left + ((s - lo) / (hi - lo)) * (width - left - 10);
  // Each pod's moments, a line and one letter each; a letter that would print on another goes a line lower.
  const momentsOf = (p: PodTimes) =>
    [
      { at: p.deletion, colour: '#8250df', letter: 'D', label: 'deleted' },
      { at: p.endpointNotReady, colour: '#0969da', letter: 'E', label: 'endpoint not ready' },
      { at: p.term, colour: '#bc4c00', letter: 'T', label: `TERM (${p.termSource ?? ''})` },
      p.killed
        ? { at: p.exited, colour: '#000', letter: 'K', label: 'KILL (exit 137)' }
        : { at: p.exited, colour: '#57606a', letter: 'X', label: 'exited' },
      { at: p.gone, colour: '#8c959f', letter: 'G', label: 'gone from the API' },
    ].filter((m): m is typeof m & { at: number } => m.at !== null);
  const tiers = pods.map((p) =>
    tiersOf(
      momentsOf(p).map((m) => ({ x: X(m.at) + 2, text: m.letter })),
      [],
    ),
  );
  const rowTop: number[] = [];
  let y = top;
  for (let i = 0; i <= pods.length; i++) {
    rowTop.push(y);
    y += Math.max(rowH, 14 + tierH * Math.max(0, ...(tiers[i] ?? [])));
  }
  const height = y + 40;
  const parts: string[] = [];
  const step = tickStep(hi - lo);
  for (let s = Math.ceil(lo / step) * step; s <= hi; s += step)
    parts.push(
      `<line x1="${X(s)}" x2="${X(s)}" y1="${top - 4}" y2="${height - 30}" stroke="#eee"/><text class="tick" x="${X(s)}" y="${height - 18}" text-anchor="middle">${s}s</text>`,
    );
  [...pods.map((p) => `${p.name} (${p.old ? 'old' : 'new'})`), 'no answer, no pod'].forEach((label, i) => {
    parts.push(
      `<text class="row" x="4" y="${rowTop[i]! + 14}">${x(label.length > 30 ? `…${label.slice(-29)}` : label)}</text>`,
    );
  });
  for (const { record: r, sent: from, ended } of requests) {
    const failed = r.outcome !== 'completed';
    const who = failed ? (failedPod.get(r.id) ?? r.podUid) : r.podUid;
    const row = (who ? rowOf.get(who) : undefined) ?? unknownRow;
    const colour = !failed ? '#2da44e' : r.outcome === 'rejected' ? '#d4a72c' : '#cf222e';
    const title = `<title>${x(r.id)} ${x(r.outcome)}${r.errorCode ? ` ${x(r.errorCode)}` : ''}: sent ${from.toFixed(2)}s, ended ${ended.toFixed(2)}s</title>`;
    // A failed request is a bar from sent to its end, its times kept for the tables beside it; a completed one a tick.
    parts.push(
      failed
        ? `<g data-t="${from.toFixed(3)} ${ended.toFixed(3)}"><rect x="${X(from).toFixed(1)}" y="${rowTop[row]! + 3}" width="${Math.max(2, X(ended) - X(from)).toFixed(1)}" height="14" fill="${colour}" fill-opacity="0.8"/>${title}</g>`
        : `<rect x="${X(from).toFixed(1)}" y="${rowTop[row]! + 7}" width="1" height="6" fill="${colour}">${title}</rect>`,
    );
  }
  pods.forEach((p, i) => {
    const y0 = rowTop[i]!;
    const h = (rowTop[i + 1] ?? y0 + rowH) - y0 - 2;
    momentsOf(p).forEach((m, k) => {
      parts.push(
        `<g data-t="${m.at.toFixed(3)} ${m.at.toFixed(3)}"><line x1="${X(m.at)}" x2="${X(m.at)}" y1="${y0}" y2="${y0 + h}" stroke="${m.colour}" stroke-width="2"/><title>${x(p.name)} ${x(m.label)} at ${m.at.toFixed(2)}s</title></g><text class="label" x="${X(m.at) + 2}" y="${y0 + 9 + tierH * tiers[i]![k]!}" fill="${m.colour}">${m.letter}</text>`,
      );
    });
  });
  const legend =
    '<span style="color:#2da44e">■ completed</span> <span style="color:#cf222e">■ failed</span> <span style="color:#d4a72c">■ 503</span> (by the pod that answered, or the one each failure is attributed to) · <span style="color:#8250df">D deleted</span> <span style="color:#0969da">E endpoint not ready</span> <span style="color:#bc4c00">T TERM</span> <span style="color:#000">K KILL</span> <span style="color:#57606a">X exited</span> <span style="color:#8c959f">G gone</span>';
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" role="img" aria-label="requests over time per pod">${parts.join('')}</svg><p class="muted">${legend}; seconds from the ${x(g.action)}</p>`;
}

export function renderVerifyHtml(g: VerifyGrade, o: VerificationObservation): string {
  const table = (header: string[], rows: string[][]) =>
    `<table><tr>${header.map((h) => `<th>${x(h)}</th>`).join('')}</tr>${rows.map((r) => `<tr>${r.map((c) => `<td>${x(c)}</td>`).join('')}</tr>`).join('')}</table>`;
  const cls = g.verdict === 'pass' ? 'pass' : g.verdict === 'fail' ? 'fail' : 'inconclusive';
  // The failed requests' times as the chart draws them, to the millisecond (the grade keeps them to a tenth).
  const exact = new Map(requestTimes(o).map((r) => [r.record.id, r]));
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>termlab verify deployment/${x(g.deployment)}</title><style>${STYLE}</style></head><body>
<h1>termlab verify: deployment/${x(g.deployment)}</h1>
<p class="${cls}"><strong>${x(g.verdict)}</strong> — ${x(g.action)} in namespace ${x(g.namespace)}: ${x(g.explanation)}</p>
${
  g.failed
    ? `<ul>${causeLines(g)
        .map((l) => `<li>${x(l)}</li>`)
        .join('')}</ul>`
    : ''
}
${
  g.edge
    ? `<h2>The edge</h2><ul>${edgeSummaryLines(g)
        .map((l) => `<li>${x(l)}</li>`)
        .join('')}</ul>${g.edge.picture ? edgePictureHtml(g.edge.picture, 'edge-picture') : ''}`
    : ''
}
${g.advice.length ? `<h2>Advice</h2><ul>${g.advice.map((a) => `<li>${x(a)}</li>`).join('')}</ul><p class="muted">${g.reasoning.map((r) => `because ${x(r)}`).join('<br>')}</p>` : ''}
<h2>Requests over time, per pod</h2>${verifySvg(g, o)}
<h2>Pods</h2>${table(
    POD_HEADER,
    g.pods.map((p) => podRow(p, 2)),
  )}
${
  g.failures.length
    ? `<h2>Failed requests</h2>${table(
        ['request', 'sent', 'ended', 'error', 'stage', 'pod', 'cause', 'why'],
        g.failures.map((f) => [
          f.id,
          secs(exact.get(f.id)?.sent ?? f.sent, 2),
          secs(exact.get(f.id)?.ended ?? f.ended, 2),
          f.errorCode ?? f.outcome,
          f.stage ?? '—',
          f.pod ?? '—',
          String(f.cause),
          g.edge ? causeText(g, f) : f.why,
        ]),
      )}`
    : ''
}
<p class="muted">${x(g.scope)}</p>
</body></html>
`;
}

export function renderVerifyJunit(g: VerifyGrade): string {
  const failure =
    g.verdict === 'pass'
      ? ''
      : `<failure type="${x(g.verdict)}" message="${x(g.explanation)}">${x([g.explanation, ...causeLines(g), ...g.advice].join('\n'))}</failure>`;
  const props = {
    deployment: g.deployment,
    namespace: g.namespace,
    action: g.action,
    requests: String(g.requests),
    failed: String(g.failed),
    terminations: String(g.terminations),
  };
  return `<?xml version="1.0" encoding="UTF-8"?>
<testsuites name="termlab verify" tests="1" failures="${g.verdict === 'pass' ? 0 : 1}">
  <testsuite name="verify deployment/${x(g.deployment)}" tests="1" failures="${g.verdict === 'pass' ? 0 : 1}" errors="0">
    <properties>${Object.entries(props)
      .map(([k, v]) => `<property name="${k}" value="${x(v)}"/>`)
      .join('')}</properties>
    <testcase classname="termlab.verify.${x(g.namespace)}" name="${x(g.action)} deployment/${x(g.deployment)}">${failure}</testcase>
  </testsuite>
</testsuites>
`;
}
