// A hand-in held against the class's witness (issue 41): what each observation claims about its pod, and
// whether the witness's record of that pod (handed in as plain records: the grader never reads a cluster)
// agrees. A file forged consistently passes every cross-examination of itself; it cannot make the
// cluster's own record say the same.
import type { AnyParsedObservation } from '../observation/read.ts';
import type { WitnessRecord } from '../observation/witness.ts';

/** What one observation says of the pod it deleted: the fields the witness also keeps. */
export interface PodClaim {
  source: string;
  scenario: string;
  uid: string;
  simulated: boolean;
  /** The container whose end the observation graded, and that end. */
  container: string | null;
  exitCode: number | null;
  reason: string | null;
  finishedAt: string | null;
  deletionTimestamp: string | null;
  grace: number | null;
}

/** The claims of one observation: its pod's (a rollout names no one pod; a run that made none claims nothing). */
export function claimsOf(parsed: AnyParsedObservation, source: string): PodClaim[] {
  if (parsed.kind !== 'pod') return [];
  const o = parsed.observation;
  if (!o.pod) return [];
  const ack = o.timeline.deleteAcknowledged;
  return [
    {
      source,
      scenario: o.scenario.name,
      uid: o.pod.uid,
      simulated: o.run.cluster.simulated,
      container: o.finalState?.container ?? null,
      exitCode: o.finalState?.exitCode ?? null,
      reason: o.finalState?.reason ?? null,
      finishedAt: o.finalState?.finishedAt ?? null,
      deletionTimestamp: ack?.deletionTimestamp ?? null,
      grace: ack?.deletionGracePeriodSeconds ?? null,
    },
  ];
}

/** A student name compared as people read it: case and spacing do not make two students. */
export const sameStudentName = (name: string): string =>
  name.normalize('NFKC').trim().replace(/\s+/g, ' ').toLowerCase();

/** The API's times are whole seconds: two readings of one time agree within one. */
const API_PRECISION_MS = 1000;

export type VouchStatus = 'yes' | 'no record' | 'mismatch' | 'not vouchable';

export interface Vouch {
  status: VouchStatus;
  /** The gradebook's "vouched" cell: `yes`, `no record`, `mismatch: FIELD (witness X, hand-in Y)`, `not vouchable`. */
  column: string;
  /** One line per disagreement, naming the file, the pod and both values: the instructor's review. */
  problems: string[];
}

const shown = (v: unknown) => (v === null || v === undefined ? 'none' : typeof v === 'string' ? v : JSON.stringify(v));

function timesDiffer(a: string | null, b: string | null): boolean {
  if (a === null || b === null) return a !== b;
  return Math.abs(Date.parse(a) - Date.parse(b)) > API_PRECISION_MS;
}

/** Each field of one claim that the record contradicts, in the order the column names the first. */
function mismatches(
  claim: PodClaim,
  record: WitnessRecord,
  student: string,
): { field: string; witness: string; handIn: string }[] {
  const out: { field: string; witness: string; handIn: string }[] = [];
  const add = (field: string, witness: unknown, handIn: unknown) =>
    out.push({ field, witness: shown(witness), handIn: shown(handIn) });
  if (record.student === null || sameStudentName(record.student) !== sameStudentName(student))
    add('owner', record.student ?? `no student's (namespace ${record.namespace})`, student);
  if (claim.exitCode !== null || claim.container !== null) {
    const ended = record.containers.find((c) => c.name === claim.container) ?? null;
    if (ended === null) add('exitCode', `no end of container ${shown(claim.container)}`, claim.exitCode);
    else {
      if (ended.exitCode !== claim.exitCode) add('exitCode', ended.exitCode, claim.exitCode);
      if (ended.reason !== claim.reason) add('reason', ended.reason, claim.reason);
      if (timesDiffer(ended.finishedAt, claim.finishedAt)) add('finishedAt', ended.finishedAt, claim.finishedAt);
    }
  }
  if (timesDiffer(record.deletionTimestamp, claim.deletionTimestamp))
    add('deletionTimestamp', record.deletionTimestamp, claim.deletionTimestamp);
  if (record.grace !== claim.grace) add('grace', record.grace, claim.grace);
  return out;
}

/**
 * One hand-in against the witness: every pod it names must be recorded, be the hand-in's student's, and
 * have ended as the file says. Runs on the simulated cluster are `not vouchable` (no witness saw them).
 */
export function vouch(claims: PodClaim[], student: string, records: ReadonlyMap<string, WitnessRecord>): Vouch {
  const problems: string[] = [];
  let column: string | null = null;
  let anySimulated = false;
  for (const claim of claims) {
    if (claim.simulated) {
      anySimulated = true;
      continue;
    }
    const where = `${claim.source}: pod ${claim.uid} (${claim.scenario})`;
    const record = records.get(claim.uid);
    if (!record) {
      problems.push(`${where}: the witness has no record of this pod (the cluster never ran it, or not in this class)`);
      column ??= 'no record';
      continue;
    }
    const late = record.lateDeletion
      ? ' (the witness first saw this deletion after the containers had ended: it was down then)'
      : '';
    for (const m of mismatches(claim, record, student)) {
      const text = `${m.field} (witness ${m.witness}, hand-in ${m.handIn})`;
      problems.push(`${where}: mismatch: ${text}${m.field === 'grace' || m.field === 'deletionTimestamp' ? late : ''}`);
      column ??= `mismatch: ${text}`;
    }
  }
  if (column !== null) return { status: column.startsWith('mismatch') ? 'mismatch' : 'no record', column, problems };
  if (anySimulated) return { status: 'not vouchable', column: 'not vouchable', problems };
  if (claims.length === 0)
    return {
      status: 'no record',
      column: 'no record',
      problems: ['no pod UID in the hand-in to hold against the witness'],
    };
  return { status: 'yes', column: 'yes', problems };
}
