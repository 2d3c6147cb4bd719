// A verification's reports: the terminal summary, Markdown that fits a CI job summary, HTML with a
// picture (requests over time per pod by outcome; each pod's deletion, TERM, KILL and endpoint
// changes on the same axis) and JUnit. Every string from the file is escaped by harness/report's helpers.
import { parseLoadLog } from '../grade/rollout/records.ts';
import { escapeXml as x } from '../report/format.ts';
import { STYLE, tickStep } from '../report/html.ts';
import { cell } from '../report/markdown.ts';
import { escapeTerminal as t } from '../../lib/terminal.ts';
import type { PodTimes } from './facts.ts';
import { CAUSES, type CauseNumber, type VerifyGrade } from './grade.ts';
import type { VerificationObservation } from '../observation/verification.ts';

const VERDICT = { pass: '✅ pass', fail: '❌ fail', inconclusive: '⚠️ inconclusive' } as const;
const s1 = (v: number | null) => (v === null ? '—' : `${v.toFixed(1)}s`);
const causeLines = (g: VerifyGrade) =>
  ([1, 2, 3, 4] as CauseNumber[]).filter((c) => g.byCause[c]).map((c) => `cause ${c} (${CAUSES[c]}): ${g.byCause[c]}`);
const FAILED_SHOWN = 20;

export function terminalSummary(g: VerifyGrade): string {
  const lines = [
    `${VERDICT[g.verdict]}  deployment/${t(g.deployment)} (${t(g.namespace)}), ${t(g.action)}: ${t(g.explanation)}`,
    ...causeLines(g).map((l) => `  ${l}`),
    ...g.failures
      .slice(0, 5)
      .map(
        (f) => `    ${t(f.id)} at ${f.sent.toFixed(1)}s ${t(f.errorCode ?? f.outcome)} → cause ${f.cause}: ${t(f.why)}`,
      ),
    ...(g.failures.length > 5 ? [`    … ${g.failures.length - 5} more in the reports`] : []),
    ...g.advice.map((a) => `  advice: ${t(a)}`),
    ...g.reasoning.map((r) => `    because ${t(r)}`),
    `  ${t(g.scope)}`,
    ...g.problems.map((p) => `  problem: ${t(p)}`),
  ];
  return lines.join('\n') + '\n';
}

function podRow(p: PodTimes): string[] {
  return [
    p.name,
    p.old ? 'old' : 'new',
    p.preStop,
    s1(p.deletion),
    s1(p.endpointNotReady),
    s1(p.term),
    p.termSource ?? '—',
    s1(p.exited),
    p.exitCode === null ? '—' : String(p.exitCode),
    s1(p.gone),
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
    table(POD_HEADER, g.pods.map(podRow)),
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
                f.why,
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

/** The picture: one row per pod, requests as marks coloured by outcome, the pod's moments on the same axis. */
export function verifySvg(g: VerifyGrade, o: VerificationObservation): string {
  const origin = o.acted ? Date.parse(o.acted.at.wall) : Date.parse(o.run.observedAt);
  const records = parseLoadLog(o.evidence.loadLog).records;
  const failedPod = new Map(g.failures.map((f) => [f.id, f.pod]));
  const pods = [...g.pods].sort((a, b) => Number(b.old) - Number(a.old) || (a.created ?? 0) - (b.created ?? 0));
  const rowOf = new Map<string, number>();
  pods.forEach((p, i) => {
    rowOf.set(p.uid, i);
    rowOf.set(p.name, i);
  });
  const unknownRow = pods.length;
  const sent = records.map((r) => (Date.parse(r.sent.time) - origin) / 1000);
  const moments = pods
    .flatMap((p) => [p.deletion, p.term, p.exited, p.endpointNotReady, p.gone])
    .filter((v): v is number => v !== null);
  const lo = Math.floor(Math.min(0, ...sent.slice(0, 1), ...moments));
  const hi = Math.ceil(Math.max(1, ...sent.slice(-1), ...moments));
  const left = 190,
    width = 900,
    rowH = 22,
    top = 20;
  const X = (s: number) => left + ((s - lo) / (hi - lo)) * (width - left - 10);
  const height = top + (pods.length + 1) * rowH + 40;
  const parts: string[] = [];
  const step = tickStep(hi - lo);
  for (let s = Math.ceil(lo / step) * step; s <= hi; s += step)
    parts.push(
      `<line x1="${X(s)}" x2="${X(s)}" y1="${top - 4}" y2="${height - 30}" stroke="#eee"/><text class="tick" x="${X(s)}" y="${height - 18}">${s}s</text>`,
    );
  [...pods.map((p) => `${p.name} (${p.old ? 'old' : 'new'})`), 'no answer, no pod'].forEach((label, i) => {
    parts.push(
      `<text class="row" x="4" y="${top + i * rowH + 14}">${x(label.length > 30 ? `…${label.slice(-29)}` : label)}</text>`,
    );
  });
  records.forEach((r, i) => {
    const failed = r.outcome !== 'completed';
    const who = failed ? (failedPod.get(r.id) ?? r.podUid) : r.podUid;
    const row = (who ? rowOf.get(who) : undefined) ?? unknownRow;
    const colour = !failed ? '#2da44e' : r.outcome === 'rejected' ? '#d4a72c' : '#cf222e';
    parts.push(
      `<rect x="${X(sent[i]!).toFixed(1)}" y="${top + row * rowH + (failed ? 3 : 7)}" width="${failed ? 2 : 1}" height="${failed ? 14 : 6}" fill="${colour}"><title>${x(r.id)} ${x(r.outcome)}${r.errorCode ? ` ${x(r.errorCode)}` : ''}</title></rect>`,
    );
  });
  // Each moment a line and one letter, the letters at their own heights so moments close together stay readable.
  const mark = (
    p: PodTimes,
    i: number,
    at: number | null,
    colour: string,
    letter: string,
    label: string,
    level: number,
  ) => {
    if (at === null) return;
    const y = top + i * rowH;
    parts.push(
      `<line x1="${X(at)}" x2="${X(at)}" y1="${y}" y2="${y + rowH - 2}" stroke="${colour}" stroke-width="2"><title>${x(p.name)} ${x(label)} at ${at.toFixed(2)}s</title></line><text class="label" x="${X(at) + 2}" y="${y + 7 + level * 5}" fill="${colour}">${letter}</text>`,
    );
  };
  pods.forEach((p, i) => {
    mark(p, i, p.deletion, '#8250df', 'D', 'deleted', 0);
    mark(p, i, p.endpointNotReady, '#0969da', 'E', 'endpoint not ready', 1);
    mark(p, i, p.term, '#bc4c00', 'T', `TERM (${p.termSource ?? ''})`, 2);
    if (p.killed) mark(p, i, p.exited, '#000', 'K', 'KILL (exit 137)', 3);
    else mark(p, i, p.exited, '#57606a', 'X', 'exited', 3);
  });
  const legend =
    '<span style="color:#2da44e">■ completed</span> <span style="color:#cf222e">■ failed</span> <span style="color:#d4a72c">■ 503</span> (by the pod that answered, or the one each failure is attributed to) · <span style="color:#8250df">D deleted</span> <span style="color:#0969da">E endpoint not ready</span> <span style="color:#bc4c00">T TERM</span> <span style="color:#000">K KILL</span> <span style="color:#57606a">X exited</span>';
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" role="img" aria-label="requests over time per pod">${parts.join('')}</svg><p class="muted">${legend}; seconds from the ${x(g.action)}</p>`;
}

export function renderVerifyHtml(g: VerifyGrade, o: VerificationObservation): string {
  const table = (header: string[], rows: string[][]) =>
    `<table><tr>${header.map((h) => `<th>${x(h)}</th>`).join('')}</tr>${rows.map((r) => `<tr>${r.map((c) => `<td>${x(c)}</td>`).join('')}</tr>`).join('')}</table>`;
  const cls = g.verdict === 'pass' ? 'pass' : g.verdict === 'fail' ? 'fail' : 'inconclusive';
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>termlab verify deployment/${x(g.deployment)}</title><style>${STYLE}</style></head><body>
<h1>termlab verify: deployment/${x(g.deployment)}</h1>
<p class="${cls}"><strong>${x(VERDICT[g.verdict])}</strong> — ${x(g.action)} in namespace ${x(g.namespace)}: ${x(g.explanation)}</p>
${
  g.failed
    ? `<ul>${causeLines(g)
        .map((l) => `<li>${x(l)}</li>`)
        .join('')}</ul>`
    : ''
}
${g.advice.length ? `<h2>Advice</h2><ul>${g.advice.map((a) => `<li>${x(a)}</li>`).join('')}</ul><p class="muted">${g.reasoning.map((r) => `because ${x(r)}`).join('<br>')}</p>` : ''}
<h2>Requests over time, per pod</h2>${verifySvg(g, o)}
<h2>Pods</h2>${table(POD_HEADER, g.pods.map(podRow))}
${
  g.failures.length
    ? `<h2>Failed requests</h2>${table(
        ['request', 'sent', 'ended', 'error', 'stage', 'pod', 'cause', 'why'],
        g.failures.map((f) => [
          f.id,
          `${f.sent.toFixed(1)}s`,
          `${f.ended.toFixed(1)}s`,
          f.errorCode ?? f.outcome,
          f.stage ?? '—',
          f.pod ?? '—',
          String(f.cause),
          f.why,
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
