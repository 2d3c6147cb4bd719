// Markdown fit for a CI job summary: a table, then a Mermaid gantt per scenario.
import { type GradeResult, objectUidOf, type PairResult, type TimelineBar } from '../grade/types.ts';
import {
  formatExits,
  predictionShown,
  predictionsCount,
  seconds,
  supersededLabel,
  supersededText,
  tryName,
  VERDICT_LABEL,
} from './format.ts';
import { lifecycleRows, requestsStrip, TIMELINE_HEADER, timelineRows } from './rollout.ts';

// Table cells: no line breaks or control characters, pipes and backslashes escaped, no raw HTML,
// and Markdown's own punctuation escaped so a string from a file cannot become a link or emphasis.
export const cell = (value: unknown) =>
  String(value)
    .replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]+/g, ' ')
    .replace(/[\\`*_[\]|~]/g, (c) => `\\${c}`)
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;');
/** A code span that holds any string (inside one, Markdown and HTML are inert): fenced by more backticks than the string has in a row. */
const code = (value: unknown) => {
  const text = String(value)
    .replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]+/g, ' ')
    .replace(/\|/g, '\\|');
  const fence = '`'.repeat(Math.max(0, ...(text.match(/`+/g) ?? []).map((run) => run.length)) + 1);
  return `${fence} ${text} ${fence}`;
};
// Mermaid has no escaping inside a task line: keep labels to a safe alphabet.
const mermaidText = (value: string) => value.replace(/[^A-Za-z0-9 ._()/-]/g, ' ').trim() || 'item';

function gantt(result: GradeResult): string {
  if (result.timeline.length === 0) return '_No timeline: the pod was never deleted._';
  const origin = Math.min(...result.timeline.map((b) => b.start));
  // Mermaid cannot take millisecond durations: give every bar an explicit start and end (epoch ms).
  const at = (s: number) => Math.round((s - origin) * 1000);
  const lines = [
    '```mermaid',
    'gantt',
    `  title ${mermaidText(result.scenario)} (0 = ${(-origin).toFixed(1)}s before the delete)`,
    '  dateFormat x',
    '  axisFormat %M:%S',
  ];
  const sections: [string, TimelineBar['kind'][]][] = [
    ['request', ['request']],
    ['kubelet', ['grace', 'hook']],
    ['container', ['term', 'terminated']],
  ];
  // A pod with a sidecar: request and grace, then one section (lane) per container on the same axis.
  const lanes = [...new Set(result.timeline.flatMap((b) => (b.lane ? [b.lane] : [])))];
  const sectioned: [string, TimelineBar[]][] = lanes.length
    ? [
        ['request', result.timeline.filter((b) => b.kind === 'request' && !b.lane)],
        ['kubelet', result.timeline.filter((b) => b.kind === 'grace')],
        ...lanes.map((lane): [string, TimelineBar[]] => [lane, result.timeline.filter((b) => b.lane === lane)]),
      ]
    : sections.map(([name, kinds]): [string, TimelineBar[]] => [
        name,
        result.timeline.filter((b) => kinds.includes(b.kind)),
      ]);
  let taskNumber = 0;
  for (const [name, bars] of sectioned) {
    if (!bars.length) continue;
    lines.push(`  section ${mermaidText(name)}`);
    for (const [i, bar] of bars.entries()) {
      const tag =
        bar.start === bar.end
          ? 'milestone, '
          : bar.kind === 'request' && (bar.lane ? !bar.label.endsWith('completed') : result.outcome !== 'completed')
            ? 'crit, '
            : '';
      // Task ids are the diagram's own: unique across the lanes, which repeat kinds.
      const task = lanes.length ? `${bar.kind}${taskNumber++}` : `${bar.kind}${i}`;
      lines.push(`  ${mermaidText(bar.label)} :${tag}${task}, ${at(bar.start)}, ${at(bar.end)}`);
    }
  }
  lines.push('```');
  return lines.join('\n');
}

function rolloutMarkdown(r: GradeResult): string[] {
  const ro = r.rollout!;
  const row = (cells: string[]) => `| ${cells.map(cell).join(' | ')} |`;
  return [
    `Model (from each old pod's live lifecycle): requests failing ${cell(ro.exposure)}; ${cell(ro.steps.join('; '))}.`,
    '',
    `${ro.requests.failed} of ${ro.requests.total} requests failed, ${ro.requests.oldFailed} at old pods.`,
    '',
    '| pod | revision | its template | live pod (read as it terminated) |',
    '| --- | --- | --- | --- |',
    ...lifecycleRows(ro).map((x) => row([x.pod, x.revision, x.template, x.live])),
    '',
    row(TIMELINE_HEADER),
    `|${' --- |'.repeat(TIMELINE_HEADER.length)}`,
    ...timelineRows(ro).map(row),
    '',
    'Requests over time, one character a second (· all completed, ✗ some failed; 0 = the template change):',
    '',
    '```',
    requestsStrip(ro).replace(/`/g, "'"),
    '```',
    '',
  ];
}

export function renderMarkdown(results: GradeResult[], pairs: PairResult[] = [], problems: string[] = []): string {
  const out: string[] = ['# termlab report', ''];
  const counts = new Map<string, number>();
  for (const r of results.filter((x) => !x.supersededBy)) counts.set(r.verdict, (counts.get(r.verdict) ?? 0) + 1);
  out.push(
    [...counts].map(([v, n]) => `${VERDICT_LABEL[v as keyof typeof VERDICT_LABEL]}: ${n}`).join(' · ') ||
      'No observations graded.',
    '',
  );
  const count = predictionsCount(results.filter((x) => !x.supersededBy));
  if (count) out.push(`**${count}** (a prediction is right when it agrees with the kubelet model)`, '');
  out.push(
    `| scenario | mode | preStop | grace | work | outcome | exit | verdict |${count ? ' your prediction |' : ''}`,
    `| --- | --- | --- | --- | --- | --- | --- | --- |${count ? ' --- |' : ''}`,
  );
  for (const r of results) {
    const predicted = count ? ` ${cell(predictionShown(r)?.text ?? '')} |` : '';
    out.push(
      `| ${cell(tryName(r))} | ${cell(r.mode)} | ${cell(r.preStop)} | ${r.graceSeconds}s | ${seconds(r.workMs)} | ${cell(r.outcome)} | ${cell(formatExits(r))} | ${r.supersededBy ? supersededLabel(r) : VERDICT_LABEL[r.verdict]} |${predicted}`,
    );
  }
  for (const pair of pairs)
    for (const c of pair.checks) out.push('', `**Lab pair ${cell(pair.pairId)}**: ${c.status} — ${cell(c.reason)}`);
  if (problems.length) out.push('', '## Files that could not be graded', '', ...problems.map((p) => `- ${cell(p)}`));
  for (const r of results) {
    out.push(
      '',
      `## ${cell(tryName(r))} — ${r.supersededBy ? supersededLabel(r) : VERDICT_LABEL[r.verdict]}`,
      '',
      `> ${cell(r.supersededBy ? supersededText(r) : r.explanation)}`,
      '',
    );
    for (const note of r.notes) out.push(`_Note: ${cell(note)}_`, '');
    if (r.rollout) out.push(...rolloutMarkdown(r));
    else {
      out.push(`Model: ${cell(r.prediction?.steps.join('; ') ?? '')}.`, '');
      // The same in the kubelet's own names, folded: docs/grading.md's "The kubelet's terms" explains them.
      const terms = r.prediction?.terms ?? [];
      if (terms.length)
        out.push(
          "<details><summary>In the kubelet's terms</summary>",
          '',
          ...terms.map((t) => `- ${code(t)}`),
          '',
          "What these names mean: docs/grading.md, “The kubelet's terms”.",
          '',
          '</details>',
          '',
        );
      out.push(gantt(r), '');
    }
    out.push('<details><summary>Checks</summary>', '', '| check | status | reason |', '| --- | --- | --- |');
    for (const c of r.checks) out.push(`| ${code(c.id)} | ${c.status} | ${cell(c.reason)} |`);
    out.push(
      '',
      `${r.kind === 'pod' ? 'Pod' : 'Deployment'} ${cell(objectUidOf(r) ?? 'unknown')}, run ${cell(r.runId)}, ${cell(r.source)}`,
      '',
      '</details>',
    );
  }
  return out.join('\n') + '\n';
}
