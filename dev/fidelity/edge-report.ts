// fidelity.md's edge section: per edge scenario, what the model grades on both sides, then the figures shown
// and not compared (the edge's lag, the old pods' TERM → exit) side by side.
import { EDGE_NOT_COMPARED, type EdgeComparison, type EdgeSideResult, usualAnswers } from './edge-compare.ts';
import type { OffsetStats } from './compare.ts';

const range = (s: OffsetStats | null) =>
  s ? `${s.median.toFixed(2)}s (${s.min.toFixed(2)}s–${s.max.toFixed(2)}s, n=${s.n})` : '–';
const counts = (c: number[]) => c.join(' / ');

function seenCell(side: EdgeSideResult | null, cause: string): string {
  const s = side?.seen[cause];
  return s ? `${s.seen ? 'seen' : 'not seen'} (${counts(s.counts)})` : '–';
}

function answersCell(side: EdgeSideResult | null): string {
  if (!side) return '–';
  const all = Object.entries(side.answers);
  if (!all.length) return 'none';
  return all.map(([k, a]) => `${a.most ? '' : '(some runs) '}${k} × ${counts(a.counts)}`).join('<br>');
}

function otherCell(side: EdgeSideResult | null): string {
  if (!side) return '–';
  const all = Object.entries(side.otherAnswers);
  return all.length ? all.map(([k, c]) => `${k} × ${counts(c)}`).join('<br>') : 'none';
}

export function renderEdgeSection(comparisons: EdgeComparison[]): string[] {
  if (!comparisons.length) return [];
  const agreeing = comparisons.filter((c) => !c.disagreements.length).length;
  const runs = Math.max(0, ...comparisons.map((c) => Math.max(c.sim?.runs ?? 0, c.node?.runs ?? 0)));
  const lines = [
    '',
    '# The edge scenarios (manifests/edge.yaml)',
    '',
    `Each ran ${runs} times per side, one at a time, through the side's own edge: the simulated edge (cluster/sim/edge) and the node's Traefik (manifests/edge/traefik.yaml). Compared is what the edge model grades (harness/grade/edge), outcome classes only: its verdict on the runs; whether requests failed; each cause the model expects or rules out, seen or not (most runs of a side decide each); and the answers the clients got for the failures it expects (the edge's status and body, the app's own answer by its event, no answer by the client's error): a kind most runs of one side gave must have come in some run of the other (how often a window catches one is not graded). Shown and not compared: the causes the model only allows (${EDGE_NOT_COMPARED.possible}); the edge's lag (${EDGE_NOT_COMPARED.lag}); the old pods' TERM → exit (${EDGE_NOT_COMPARED.exit}). Counts are per run.`,
    '',
    `**${agreeing} of ${comparisons.length} edge scenarios agree.**`,
    '',
    "| scenario | agree | sim: verdict / failed | node: verdict / failed | sim: edge's lag | node: edge's lag |",
    '| --- | --- | --- | --- | --- | --- |',
    ...comparisons.map(
      (c) =>
        `| ${c.scenario} | ${c.disagreements.length ? 'no' : 'yes'} | ${brief(c.sim)} | ${brief(c.node)} | ${range(c.sim?.lag ?? null)} | ${range(c.node?.lag ?? null)} |`,
    ),
  ];
  for (const c of comparisons) {
    lines.push('', `## ${c.scenario} (edge)`, '');
    if (c.disagreements.length) lines.push(`Disagreements: ${c.disagreements.join('; ')}.`, '');
    lines.push('| | the model | simulated | real node | compared |', '| --- | --- | --- | --- | --- |');
    lines.push(
      `| verdict (each run's) | | ${c.sim?.verdicts.join(' / ') ?? '–'} | ${c.node?.verdicts.join(' / ') ?? '–'} | most runs' |`,
    );
    lines.push(
      `| requests failed (of) | | ${c.sim ? `${counts(c.sim.failedCounts)} (of ${counts(c.sim.requests)})` : '–'} | ${c.node ? `${counts(c.node.failedCounts)} (of ${counts(c.node.requests)})` : '–'} | whether any |`,
    );
    for (const [cause, exposure] of Object.entries(c.model))
      lines.push(
        `| ${cause} | ${exposure} | ${seenCell(c.sim, cause)} | ${seenCell(c.node, cause)} | ${exposure === 'possible' ? 'no' : 'seen or not'} |`,
      );
    const usual = (s: EdgeSideResult | null) => (s ? usualAnswers(s).join(', ') || 'none' : '–');
    lines.push(
      `| answers to the expected failures | | ${answersCell(c.sim)} | ${answersCell(c.node)} | the kinds most runs gave (each must come on the other side): sim ${usual(c.sim)}; node ${usual(c.node)} |`,
      `| answers to the other failures | | ${otherCell(c.sim)} | ${otherCell(c.node)} | no |`,
      `| the edge's lag (each failure's) | | ${range(c.sim?.lag ?? null)} | ${range(c.node?.lag ?? null)} | no |`,
      `| old pods' TERM → container ended | | ${range(c.sim?.termToEnded ?? null)} | ${range(c.node?.termToEnded ?? null)} | no |`,
      `| old pods' exit codes | | ${c.sim?.exitCodes ?? '–'} | ${c.node?.exitCodes ?? '–'} | no |`,
      `| retried by the edge's middleware | | ${c.sim?.edgeRetried ?? '–'} | ${c.node?.edgeRetried ?? '–'} | no |`,
    );
    const incomplete = [
      ...(c.sim?.incomplete ?? []).map((x) => `sim ${x}`),
      ...(c.node?.incomplete ?? []).map((x) => `node ${x}`),
    ];
    if (incomplete.length) lines.push('', `Incomplete runs: ${incomplete.join('; ')}.`);
  }
  return lines;
}

function brief(side: EdgeSideResult | null): string {
  if (!side) return '–';
  const other = side.verdicts.filter((v) => v !== side.verdict);
  return `${side.verdict ?? '–'}${other.length ? ` (${other.length} run ${other.join(', ')})` : ''} / ${counts(side.failedCounts)}`;
}
