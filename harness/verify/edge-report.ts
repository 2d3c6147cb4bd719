// The edge's part of a verification's reports: its causes counted, its lag, and each failed
// request's cause at the edge beside verify's own.
import { EDGE_CAUSES } from '../edge/attribute.ts';
import type { EdgeFinding } from './edge-grade.ts';
import { ownCauseApplies, type VerifyGrade } from './grade.ts';

/** One line per edge cause seen, then the failures it left to verify's own causes, and what was not read. */
export function edgeSummaryLines(g: VerifyGrade): string[] {
  const e = g.edge;
  if (!e) return [];
  const head = `through the edge ${e.via ?? e.url}${e.readable ? '' : ' (not read: causes from the client side and the pods only)'}`;
  const causes = (Object.keys(EDGE_CAUSES) as (keyof typeof EDGE_CAUSES)[])
    .filter((c) => e.byCause[c])
    .map((c) => `at the edge, ${c} (${EDGE_CAUSES[c]}): ${e.byCause[c]}`);
  return [head, ...causes, ...(e.undecided && g.failed ? [`not decided at the edge: ${e.undecided}`] : [])];
}

export function edgeFindingOf(g: VerifyGrade, id: string): EdgeFinding | null {
  return g.edge?.findings.find((f) => f.id === id) ?? null;
}

/** A failed request's cause as one phrase: the edge's when it decided, else verify's number where it stands. */
export function causeText(g: VerifyGrade, f: { id: string; cause: number; why: string }): string {
  const e = edgeFindingOf(g, f.id);
  if (e?.cause) return `${e.cause}: ${e.why}`;
  if (!ownCauseApplies(g.edge, e ?? undefined)) return `not at the edge: ${e!.why}`;
  return `cause ${f.cause}: ${f.why}${e ? ` (at the edge: ${e.why})` : ''}`;
}
