// A run's reports before its student has predicted: the setups, and how to see the rest. The outcomes, exit
// codes, verdicts and the kubelet model's answers stay out of them, as `termlab scenarios` keeps them out until
// --reveal; the observation files beside them hold the evidence in full, and `termlab grade` reads them as ever.
import type { GradeResult } from '../grade/types.ts';
import { escapeXml, seconds, tryName } from './format.ts';
import { cell } from './markdown.ts';

/** What a student may see before predicting: the setup of each scenario, nothing it led to. */
export interface SetupRow {
  scenario: string;
  mode: string;
  preStop: string;
  grace: string;
  work: string;
}

export function setupRows(results: GradeResult[]): SetupRow[] {
  return results.map((r) => ({
    scenario: tryName(r),
    mode: r.mode,
    preStop: r.preStop,
    grace: `${r.graceSeconds}s`,
    work: seconds(r.workMs),
  }));
}

const COLUMNS: (keyof SetupRow)[] = ['scenario', 'mode', 'preStop', 'grace', 'work'];

/** report.md with the answers hidden; `hint` says how to see them. */
export function renderHiddenMarkdown(results: GradeResult[], hint: string): string {
  return [
    '# termlab report: answers hidden',
    '',
    cell(hint),
    '',
    `| ${COLUMNS.join(' | ')} |`,
    `|${COLUMNS.map(() => ' --- |').join('')}`,
    ...setupRows(results).map((row) => `| ${COLUMNS.map((c) => cell(row[c])).join(' | ')} |`),
    '',
  ].join('\n');
}

/** report.html with the answers hidden: no timelines either (a bar's end is the outcome). */
export function renderHiddenHtml(results: GradeResult[], hint: string): string {
  const e = escapeXml;
  const rows = setupRows(results)
    .map((row) => `<tr>${COLUMNS.map((c) => `<td>${e(row[c])}</td>`).join('')}</tr>`)
    .join('');
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>termlab report: answers hidden</title><style>body{font:15px/1.5 system-ui,sans-serif;margin:2em auto;max-width:60em;padding:0 1em}table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:.2em .6em;text-align:left}</style></head><body>
<h1>termlab report: answers hidden</h1><p>${e(hint)}</p>
<table><tr>${COLUMNS.map((c) => `<th>${c}</th>`).join('')}</tr>${rows}</table>
</body></html>
`;
}

/** junit.xml with the answers hidden: one skipped testcase per scenario, the hint as its message. */
export function renderHiddenJunit(results: GradeResult[], hint: string): string {
  const x = escapeXml;
  const cases = setupRows(results).map(
    (row) =>
      `    <testcase classname="${x(row.scenario)}" name="answers hidden"><skipped message="${x(hint)}"/></testcase>`,
  );
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites name="termlab" tests="${cases.length}" failures="0" skipped="${cases.length}">`,
    `  <testsuite name="termlab (answers hidden)" tests="${cases.length}" failures="0" errors="0" skipped="${cases.length}">`,
    ...cases,
    '  </testsuite>',
    '</testsuites>',
    '',
  ].join('\n');
}
