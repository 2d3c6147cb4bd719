// Would the load verify is about to start log more than its verification file may hold? Asked before anything
// is made: a run that could only end with its evidence unreadable is refused, not run.
import { TermlabError } from '../../lib/errors.ts';
import { MAX_OBSERVATION_BYTES } from '../observation/schema.ts';
import { LOAD_LINE_BYTES, MAX_VERIFICATION_BYTES } from '../observation/verification.ts';

/** Room for the rest of the evidence (the watches' events, the pods' own logs, live reads): an observation's worth. */
const OTHER_EVIDENCE_BYTES = MAX_OBSERVATION_BYTES;
const LOAD_BUDGET_BYTES = MAX_VERIFICATION_BYTES - OTHER_EVIDENCE_BYTES;

/** The requests the load pod plans (server/load.ts: the rate × its duration) and their lines' bytes in the file. */
export function plannedLoad(rate: number, durationMs: number): { requests: number; bytes: number } {
  const requests = Math.max(1, Math.floor((durationMs / 1000) * rate));
  return { requests, bytes: requests * LOAD_LINE_BYTES };
}

/** Throws USAGE (exit 2) naming --rate, the duration, the figure and what to change, when the load could overfill the file. */
export function checkLoadFits(rate: number, durationMs: number): void {
  const { requests, bytes } = plannedLoad(rate, durationMs);
  if (bytes <= LOAD_BUDGET_BYTES) return;
  const seconds = Math.round(durationMs / 1000);
  const fitting = Math.floor(LOAD_BUDGET_BYTES / LOAD_LINE_BYTES / (durationMs / 1000));
  const mb = (n: number) => `${Math.round(n / 2 ** 20)} MiB`;
  throw new TermlabError(
    'USAGE',
    `--rate ${rate}: the load may run ${seconds} s (verify's bound: the Deployment's progressDeadlineSeconds and grace + 60 s, plus twice --ready-timeout and 3 s), ${requests} requests of ~${LOAD_LINE_BYTES} bytes each in the verification file: ~${mb(bytes)}, more than the ${mb(LOAD_BUDGET_BYTES)} its load lines may take (the file is read back within ${mb(MAX_VERIFICATION_BYTES)}); nothing was made or changed. Give --rate ${Math.max(1, fitting)} or less, or shorten the bound: a lower --ready-timeout, or a lower progressDeadlineSeconds on the Deployment`,
    { rate, durationMs, requests, bytes, limit: MAX_VERIFICATION_BYTES },
  );
}
