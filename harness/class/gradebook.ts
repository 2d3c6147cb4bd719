// A whole class: one row per submission. Rows keep counts, not results, so memory stays flat
// however large the class; pod UIDs are kept to find two submissions of one run.
import { z } from 'zod';
import type { PairResult } from '../grade/types.ts';
import { type GradeResult, objectUidOf } from '../grade/types.ts';
import type { WitnessRecord } from '../observation/witness.ts';
import { sameStudentName, vouch } from '../grade/witness.ts';
import { csvCell } from './escape.ts';
import { counts, type Lab } from './lab.ts';
import type { SubmissionGrade } from './submission.ts';

/** `invalid`: a half was handed in but its evidence is invalid; `missing`: a half was not handed in. */
const PairStatusSchema = z.enum(['pass', 'fail', 'inconclusive', 'invalid', 'missing']);
const GradebookRowSchema = z.object({
  student: z.string(),
  /** Where the student's name came from: the predictions, the name packed with --student, or the file name. */
  identity: z.enum(['predictions', 'packed --student', 'file name']),
  submission: z.string(),
  scenariosGraded: z.int(),
  matched: z.int(),
  differed: z.int(),
  evidenceInvalid: z.int(),
  inconclusive: z.int(),
  pairs: z.record(z.string(), PairStatusSchema),
  /** Predictions that agree with the kubelet model, of the scenarios graded; null without a predictions file. */
  predictionsRight: z.int().nullable(),
  predictionsTotal: z.int().nullable(),
  missingScenarios: z.array(z.string()),
  score: z.number().nullable(),
  maxScore: z.number().nullable(),
  /** Other submissions sharing a pod UID with this one: no two honest runs can. */
  duplicateOf: z.array(z.string()),
  problems: z.array(z.string()),
  /** Why a graded file's evidence is invalid, one line each. */
  invalid: z.array(z.string()),
  /** Why the instructor should look at this row; empty when nothing needs it. */
  review: z.array(z.string()),
  /**
   * Graded with --witness or --witness-file only: `yes`, `no record`, `mismatch: FIELD (witness X, hand-in Y)`
   * or `not vouchable` (a run on the simulated cluster), from harness/grade/witness.ts.
   */
  vouched: z.string().optional(),
});
export type GradebookRow = z.infer<typeof GradebookRowSchema>;
export const GradebookSchema = z.object({
  kind: z.literal('termlab.gradebook'),
  version: z.literal(2),
  lab: z.string().nullable(),
  pairIds: z.array(z.string()),
  rows: z.array(GradebookRowSchema),
  /** Entries of the submissions folders that were not graded, each with why. */
  skipped: z.array(z.object({ path: z.string(), why: z.string() })),
  /** The witness the hand-ins were held against (--witness: the cluster; --witness-file: an export); absent without. */
  witness: z.object({ source: z.string(), records: z.int() }).optional(),
});
export type Gradebook = z.infer<typeof GradebookSchema>;

/** A row before duplicates are known, and the pod UIDs that find them. */
export interface PartialRow {
  row: Omit<GradebookRow, 'duplicateOf' | 'review'>;
  podUids: Set<string>;
  checkIds: Set<string>;
  identityConflict?: string;
  attention?: string[];
  /** The witness's disagreements with this hand-in, one line each. */
  witnessProblems?: string[];
}

const RANK = { pass: 4, fail: 3, inconclusive: 2, invalid: 1, missing: 0 } as const;
/** The review column names each problem; a submission with many shows the first few and a count. */
const REVIEW_LINES_EACH = 5;

/** A pair handed in several times (several runs) counts by its best run. */
function pairStatuses(pairs: PairResult[], pairIds: string[]): Record<string, z.infer<typeof PairStatusSchema>> {
  const out: Record<string, z.infer<typeof PairStatusSchema>> = {};
  for (const id of pairIds) out[id] = 'missing';
  for (const pair of pairs) {
    const status = pair.invalidRoles?.length
      ? 'invalid'
      : pair.checks.some((c) => c.status === 'fail')
        ? 'fail'
        : pair.checks.every((c) => c.status === 'pass')
          ? 'pass'
          : 'inconclusive';
    if (RANK[status] > RANK[out[pair.pairId] ?? 'missing']) out[pair.pairId] = status;
  }
  return out;
}

function scenarioScore(result: GradeResult, lab: Lab): number {
  if (result.verdict === 'evidence-invalid') return 0;
  return result.checks
    .filter((c) => c.status === 'pass' && counts(lab, c.id))
    .reduce((sum, c) => sum + lab.points[c.id]!, 0);
}

function score(
  grade: SubmissionGrade,
  lab: Lab,
  pairs: GradebookRow['pairs'],
): { score: number; maxScore: number; missing: string[] } {
  const best = new Map<string, number>();
  for (const r of grade.results) best.set(r.scenario, Math.max(best.get(r.scenario) ?? 0, scenarioScore(r, lab)));
  const scored = lab.requiredScenarios.length ? lab.requiredScenarios : [...best.keys()];
  const perScenario = Object.keys(lab.points)
    .filter((id) => !id.startsWith('pair.') && counts(lab, id))
    .reduce((sum, id) => sum + lab.points[id]!, 0);
  const pairPoints = (id: string) => lab.points[`pair.${id}`] ?? 0;
  return {
    score:
      scored.reduce((sum, s) => sum + (best.get(s) ?? 0), 0) +
      lab.pairs.filter((id) => pairs[id] === 'pass').reduce((sum, id) => sum + pairPoints(id), 0),
    maxScore: scored.length * perScenario + lab.pairs.reduce((sum, id) => sum + pairPoints(id), 0),
    missing: lab.requiredScenarios.filter((s) => !best.has(s)),
  };
}

/** The class's witness records by pod UID, and where they came from. */
export interface WitnessRecords {
  source: string;
  byUid: ReadonlyMap<string, WitnessRecord>;
}

export function partialRow(grade: SubmissionGrade, lab: Lab | null, witness: WitnessRecords | null = null): PartialRow {
  const vouched = witness ? vouch(grade.claims, grade.student, witness.byUid) : null;
  const verdicts = (v: GradeResult['verdict']) => grade.results.filter((r) => r.verdict === v).length;
  const pairs = pairStatuses(grade.pairs, lab?.pairs ?? []);
  const scored = lab ? score(grade, lab, pairs) : null;
  const predicted = grade.hasPredictions
    ? grade.results.filter((r) => r.checks.some((c) => c.id === 'prediction.vs-model' && c.status === 'pass')).length
    : null;
  return {
    row: {
      student: grade.student,
      identity: grade.identity.source,
      submission: grade.path,
      scenariosGraded: grade.results.length,
      matched: verdicts('matches-model'),
      differed: verdicts('differs-from-model'),
      evidenceInvalid: verdicts('evidence-invalid'),
      inconclusive: verdicts('inconclusive'),
      pairs,
      predictionsRight: predicted,
      predictionsTotal: grade.hasPredictions ? grade.results.length : null,
      missingScenarios: scored?.missing ?? [],
      score: scored?.score ?? null,
      maxScore: scored?.maxScore ?? null,
      problems: grade.problems,
      invalid: [
        ...grade.invalid,
        ...grade.results
          .filter((r) => r.verdict === 'evidence-invalid' && !grade.invalid.some((l) => l.startsWith(`${r.source}:`)))
          .map((r) => `${r.source}: ${r.explanation}`),
      ],
      ...(vouched ? { vouched: vouched.column } : {}),
    },
    witnessProblems: vouched?.problems.length && vouched.status !== 'not vouchable' ? vouched.problems : [],
    identityConflict: grade.identity.conflict,
    attention: grade.attention,
    podUids: new Set(grade.results.map(objectUidOf).filter((u): u is string => u !== null)),
    checkIds: new Set([
      ...grade.results.flatMap((r) => r.checks.map((c) => c.id)),
      ...grade.pairs.flatMap((p) => p.checks.map((c) => c.id)),
    ]),
  };
}

function named(lines: string[], what: string): string[] {
  const shown = lines.slice(0, REVIEW_LINES_EACH).map((l) => `${what}: ${l}`);
  return lines.length > REVIEW_LINES_EACH ? [...shown, `${lines.length - REVIEW_LINES_EACH} more ${what}(s)`] : shown;
}

const sameName = sameStudentName;

/** Joins the rows: a pod UID or a student name in two submissions marks both, since either may be the copy. */
export function finishGradebook(
  partials: PartialRow[],
  lab: Lab | null,
  skipped: Gradebook['skipped'] = [],
  witness: WitnessRecords | null = null,
): Gradebook {
  // Without a lab file, every pair id seen anywhere in the class is a column.
  const pairIds = lab ? lab.pairs : [...new Set(partials.flatMap((p) => Object.keys(p.row.pairs)))].sort();
  const holders = new Map<string, Set<number>>();
  partials.forEach((p, i) => {
    for (const uid of p.podUids) {
      const set = holders.get(uid) ?? new Set();
      set.add(i);
      holders.set(uid, set);
    }
  });
  const byName = new Map<string, number[]>();
  partials.forEach((p, i) => {
    const key = sameName(p.row.student);
    byName.set(key, [...(byName.get(key) ?? []), i]);
  });
  const rows = partials.map((p, i) => {
    const others = new Set<number>();
    for (const uid of p.podUids) for (const j of holders.get(uid)!) if (j !== i) others.add(j);
    const duplicateOf = [...others].sort((a, b) => a - b).map((j) => partials[j]!.row.submission);
    const sameStudent = byName
      .get(sameName(p.row.student))!
      .filter((j) => j !== i)
      .map((j) => partials[j]!.row.submission);
    const review = [
      ...(duplicateOf.length ? [`shares pod UIDs with ${duplicateOf.join(', ')}`] : []),
      ...(sameStudent.length
        ? [`another submission names the same student ${JSON.stringify(p.row.student)}: ${sameStudent.join(', ')}`]
        : []),
      ...(p.identityConflict ? [p.identityConflict] : []),
      ...named(p.witnessProblems ?? [], 'witness'),
      ...named(p.attention ?? [], 'attention'),
      ...named(p.row.invalid, 'evidence invalid'),
      ...named(p.row.problems, 'file problem'),
    ];
    const pairs = { ...Object.fromEntries(pairIds.map((id) => [id, 'missing' as const])), ...p.row.pairs };
    return { ...p.row, pairs, duplicateOf, review };
  });
  return {
    kind: 'termlab.gradebook',
    version: 2,
    lab: lab?.name ?? null,
    pairIds,
    rows,
    skipped,
    ...(witness ? { witness: { source: witness.source, records: witness.byUid.size } } : {}),
  };
}

export function needsReview(book: Gradebook): boolean {
  return book.rows.some((r) => r.review.length > 0);
}

export function gradebookCsv(book: Gradebook): string {
  const header = [
    'student',
    'identity',
    'submission',
    'scenarios_graded',
    'matched',
    'differed',
    'evidence_invalid',
    'inconclusive',
    ...book.pairIds.map((id) => `pair_${id}`),
    'predictions_right',
    'predictions_total',
    'score',
    'max_score',
    'missing_scenarios',
    'duplicate_of',
    // Only when held against a witness: a gradebook without one is as it was.
    ...(book.witness ? ['vouched'] : []),
    'problems',
    'review',
  ];
  const lines = [header.map(csvCell).join(',')];
  for (const r of book.rows) {
    lines.push(
      [
        r.student,
        r.identity,
        r.submission,
        r.scenariosGraded,
        r.matched,
        r.differed,
        r.evidenceInvalid,
        r.inconclusive,
        ...book.pairIds.map((id) => r.pairs[id] ?? 'missing'),
        r.predictionsRight,
        r.predictionsTotal,
        r.score,
        r.maxScore,
        r.missingScenarios.join('; '),
        r.duplicateOf.join('; '),
        ...(book.witness ? [r.vouched ?? ''] : []),
        [...r.invalid, ...r.problems].join(' | '),
        r.review.join('; '),
      ]
        .map(csvCell)
        .join(','),
    );
  }
  return lines.join('\r\n') + '\r\n';
}

/** Lab file point ids no submission's grade ever had: a typo, or a check the grader no longer makes. */
export function unusedPointIds(partials: PartialRow[], lab: Lab): string[] {
  const seen = new Set(partials.flatMap((p) => [...p.checkIds]));
  return Object.keys(lab.points).filter((id) => !seen.has(id));
}
