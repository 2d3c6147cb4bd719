// The class report: one row per submission (sortable in the HTML), then each student's own timelines
// and checks. Every string from a submission is untrusted and escaped by the report's own escapers.
import { escapeXml as e } from '../report/format.ts';
import { STYLE } from '../report/html.ts';
import { cell } from '../report/markdown.ts';
import type { Gradebook, GradebookRow } from './gradebook.ts';

const predictionsText = (r: GradebookRow) =>
  r.predictionsTotal === null ? 'none' : `${r.predictionsRight} of ${r.predictionsTotal}`;
const scoreText = (r: GradebookRow) => (r.score === null ? '' : `${r.score}/${r.maxScore}`);
const pairsText = (r: GradebookRow, ids: string[]) => ids.map((id) => `${id}: ${r.pairs[id]}`).join(', ') || 'none';

interface Column {
  header: string;
  value: (r: GradebookRow, book: Gradebook) => string | number;
}
const COLUMNS: Column[] = [
  { header: 'student', value: (r) => r.student },
  { header: 'submission', value: (r) => r.submission },
  { header: 'pairs', value: (r, b) => pairsText(r, b.pairIds) },
  { header: 'predictions right', value: predictionsText },
  { header: 'matched', value: (r) => r.matched },
  { header: 'differed', value: (r) => r.differed },
  { header: 'invalid', value: (r) => r.evidenceInvalid },
  { header: 'inconclusive', value: (r) => r.inconclusive },
  { header: 'score', value: scoreText },
  { header: 'vouched', value: (r) => r.vouched ?? '' },
  { header: 'flags', value: (r) => r.review.join('; ') },
];
// Without --lab nothing is scored: an empty score column reads as zero, so it is left out and said why.
// Without a witness nothing is vouched for: the column is left out.
const columnsOf = (book: Gradebook) =>
  COLUMNS.filter((c) => (book.lab || c.header !== 'score') && (book.witness || c.header !== 'vouched'));
const UNSCORED = "Not scored: grade with `--lab FILE` (the lab's points and required scenarios) for a score column.";

export function renderClassMarkdown(book: Gradebook): string {
  const COLUMNS = columnsOf(book);
  const lines = [
    `# termlab class report${book.lab ? ` — ${cell(book.lab)}` : ''}`,
    '',
    `${book.rows.length} submission(s), ${book.rows.filter((r) => r.review.length).length} flagged for review, ${book.skipped.length} entr${book.skipped.length === 1 ? 'y' : 'ies'} not graded.`,
    '',
    `| ${COLUMNS.map((c) => c.header).join(' | ')} |`,
    `|${COLUMNS.map(() => '---').join('|')}|`,
    ...book.rows.map((r) => `| ${COLUMNS.map((c) => cell(c.value(r, book)) || ' ').join(' | ')} |`),
  ];
  if (!book.lab) lines.push('', UNSCORED);
  if (book.skipped.length)
    lines.push('', '## Not graded', '', ...book.skipped.map((s) => `- ${cell(s.path)}: ${cell(s.why)}`));
  return lines.join('\n') + '\n';
}

// Sorting by a column header's click: numbers as numbers, the rest as text; a second click reverses.
const SORT_SCRIPT = `document.querySelectorAll('table.class th').forEach((th,i)=>th.addEventListener('click',()=>{
const body=th.closest('table').tBodies[0];const rows=[...body.rows];const dir=th.dataset.dir==='asc'?-1:1;th.dataset.dir=dir===1?'asc':'desc';
const key=(r)=>{const t=r.cells[i].dataset.sort??r.cells[i].textContent;const n=Number(t);return t!==''&&!Number.isNaN(n)?n:t.toLowerCase();};
rows.sort((a,b)=>{const x=key(a),y=key(b);return (x<y?-1:x>y?1:0)*dir;});rows.forEach((r)=>body.appendChild(r));}));`;

/** `sections`: each submission's rendered cards (its timelines and checks), by submission path. */
export function renderClassHtml(book: Gradebook, sections: ReadonlyMap<string, string>): string {
  const COLUMNS = columnsOf(book);
  const anchor = (i: number) => `student-${i}`;
  const rows = book.rows
    .map(
      (r, i) =>
        `<tr class="${r.review.length ? 'flagged' : ''}">${COLUMNS.map((c, k) => {
          const value = c.value(r, book);
          const text =
            k === 0
              ? `<a href="#${anchor(i)}">${e(value)}</a>`
              : k === COLUMNS.length - 1 && r.review.length
                ? `<ul>${r.review.map((x) => `<li>${e(x)}</li>`).join('')}</ul>`
                : e(value);
          const sort =
            c.header === 'predictions right'
              ? ` data-sort="${r.predictionsRight ?? -1}"`
              : c.header === 'score'
                ? ` data-sort="${r.score ?? -1}"`
                : '';
          return `<td${sort}>${text}</td>`;
        }).join('')}</tr>`,
    )
    .join('\n');
  const students = book.rows
    .map(
      (r, i) => `<section class="student" id="${anchor(i)}"><h2>${e(r.student)}</h2>
<p class="muted">${e(r.submission)} · name from ${e(r.identity)} · pairs ${e(pairsText(r, book.pairIds))} · predictions ${e(predictionsText(r))}${r.score === null ? '' : ` · score ${e(scoreText(r))}`}${r.vouched === undefined ? '' : ` · vouched ${e(r.vouched)}`}</p>
${r.review.length ? `<ul class="flags">${r.review.map((x) => `<li>${e(x)}</li>`).join('')}</ul>` : ''}
${sections.get(r.submission) ?? '<p class="muted">Nothing in this submission could be graded.</p>'}</section>`,
    )
    .join('\n');
  const skipped = book.skipped.length
    ? `<h2>Not graded</h2><ul>${book.skipped.map((s) => `<li><code>${e(s.path)}</code>: ${e(s.why)}</li>`).join('')}</ul>`
    : '';
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>termlab class report</title><style>${STYLE}
table.class th{cursor:pointer;user-select:none}table.class th:hover{background:#eaeef2}tr.flagged td{background:#fff8c5}
table.class ul,ul.flags{margin:0;padding-left:1.1rem}ul.flags li{color:#9a6700}section.student{border-top:2px solid #d0d7de;margin-top:2rem}
body{max-width:1200px}</style></head><body>
<h1>termlab class report${book.lab ? ` — ${e(book.lab)}` : ''}</h1>
<p class="muted">${book.rows.length} submission(s), ${book.rows.filter((r) => r.review.length).length} flagged for review (highlighted). Click a column to sort; click a name for that student's timelines.</p>
<table class="class"><thead><tr>${COLUMNS.map((c) => `<th>${e(c.header)}</th>`).join('')}</tr></thead><tbody>
${rows}
</tbody></table>
${book.lab ? '' : `<p class="muted">${e(UNSCORED)}</p>`}
${skipped}
${students}
<script>${SORT_SCRIPT}</script>
</body></html>
`;
}
