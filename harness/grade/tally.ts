// What a grading's summary line and exit code need of every result, counted as each is graded: a
// folder of 100,000 files is graded without keeping its results (only the lab pairs' halves are kept).
import { dirname } from 'node:path';
import { failedOrInconclusive } from './grade.ts';
import { retryCause } from './retry-cause.ts';
import type { GradeResult, Verdict } from './types.ts';

/** The try key of attempts.ts markSuperseded: one scenario of one run of one folder. */
const tryKey = (r: GradeResult) => `${dirname(r.source)}\0${r.runId}\0${r.scenario}`;

export class GradeTally {
  graded = 0;
  passed = 0;
  readonly verdicts: Record<Verdict, number> = {
    'matches-model': 0,
    'differs-from-model': 0,
    inconclusive: 0,
    'evidence-invalid': 0,
  };
  /** Each scenario's last try so far (the first file of it), and whether a result of that try failed or was inconclusive. */
  private readonly lastTries = new Map<string, { attempt: number; bad: boolean; source: string }>();

  add(r: GradeResult): void {
    this.graded++;
    this.verdicts[r.verdict]++;
    const bad = failedOrInconclusive(r);
    if (!bad) this.passed++;
    const key = tryKey(r),
      attempt = r.attempt ?? 1;
    const seen = this.lastTries.get(key);
    if (!seen || attempt > seen.attempt) this.lastTries.set(key, { attempt, bad, source: r.source });
    else if (attempt === seen.attempt) seen.bad ||= bad;
  }

  /** A try that counts (each scenario's last, as attempts.ts counted) failed a check or was inconclusive. */
  countedBad(): boolean {
    for (const t of this.lastTries.values()) if (t.bad) return true;
    return false;
  }

  /**
   * Marks each kept result whose scenario had a later try (among every result tallied, kept or not) as
   * superseded by it (with why it ran again, for the reports), as attempts.ts markSuperseded does over every result.
   */
  markSuperseded(kept: GradeResult[]): void {
    for (const r of kept) {
      const last = this.lastTries.get(tryKey(r));
      if (!last || (r.attempt ?? 1) >= last.attempt) continue;
      r.supersededBy = last.source;
      const cause = retryCause(r);
      if (cause) r.retryCause = cause;
    }
  }

  /** Adds another submission's tally; its tries stay its own (an archive's members share their folder with other archives). */
  absorb(other: GradeTally, submission: string): void {
    this.graded += other.graded;
    this.passed += other.passed;
    for (const v of Object.keys(this.verdicts) as Verdict[]) this.verdicts[v] += other.verdicts[v];
    for (const [key, last] of other.lastTries) this.lastTries.set(`${submission}\0${key}`, last);
  }

  static of(results: Iterable<GradeResult>): GradeTally {
    const tally = new GradeTally();
    for (const r of results) tally.add(r);
    return tally;
  }
}
