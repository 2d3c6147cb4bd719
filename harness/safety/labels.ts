// Ownership: every object termlab creates says who made it and in which run.
import { createHash, randomBytes } from 'node:crypto';
import { userInfo } from 'node:os';

export const MANAGED_BY = 'app.kubernetes.io/managed-by';
export const MANAGER = 'termlab';
export const OWNER_LABEL = 'termlab.io/owner';
export const RUN_LABEL = 'termlab.io/run';
export const SCENARIO_LABEL = 'termlab.io/scenario';
export const HOLD_FINALIZER = 'termlab.io/hold';
/** Which class (or test setup) a pod belongs to: the class-wide reaper takes only its own env's pods. */
export const ENV_LABEL = 'termlab.io/env';

const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;

export function isLabelValue(value: string): boolean {
  return value.length <= 63 && LABEL_VALUE.test(value);
}

/** Stable per user and cluster context, so a later run or reap finds the same owner. */
export function defaultOwnerId(context: string, server: string): string {
  let user = 'user';
  try {
    user = userInfo().username;
  } catch {
    /* no passwd entry in some containers */
  }
  const safeUser =
    user
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, '-')
      .replace(/^-+|-+$/g, '')
      .slice(0, 40) || 'user';
  const where = createHash('sha256').update(`${context}\n${server}`).digest('hex').slice(0, 8);
  return `${safeUser}-${where}`;
}

export function newRunId(now = new Date()): string {
  const stamp = now.toISOString().replace(/[-:]/g, '').replace('T', '-').slice(0, 15);
  return `run-${stamp}-${randomBytes(2).toString('hex')}`;
}

export function ownershipLabels(owner: string, runId: string, scenario?: string): Record<string, string> {
  return {
    [MANAGED_BY]: MANAGER,
    [OWNER_LABEL]: owner,
    [RUN_LABEL]: runId,
    ...(scenario ? { [SCENARIO_LABEL]: scenario } : {}),
  };
}

export function ownerSelector(owner: string): string {
  return `${MANAGED_BY}=${MANAGER},${OWNER_LABEL}=${owner}`;
}

export function environmentSelector(env: string): string {
  return `${MANAGED_BY}=${MANAGER},${ENV_LABEL}=${env}`;
}
