// How a zod issue is told, in one way for every layer: where, then what. Raw text; a terminal gets it
// through formatIssue (files.ts), escaped.
import type { z } from 'zod';

/** Where a schema problem is, as a path a person can find in the file: `timeline.requestSent.at.mono`. */
export function issuePath(issue: z.core.$ZodIssue, whole = '(top level)'): string {
  return issue.path.length ? issue.path.map(String).join('.') : whole;
}

/** The one way a zod issue is told: where, then what. */
export function issueText(issue: z.core.$ZodIssue, whole = '(top level)'): string {
  return `${issuePath(issue, whole)}: ${issue.message}`;
}
