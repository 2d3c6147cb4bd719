// A class's quota full is a wait, not a failure: classmates' pods end within minutes. The API server
// refuses a pod over a ResourceQuota with 403 "exceeded quota: NAME, requested: …, used: …, limited: …";
// the run says so, tries again with backoff, and past the bound ends with QUOTA_FULL (exit 3) naming
// the quota. Never a pod over the quota: the API server is the one that counts.
import { setTimeout as sleep } from 'node:timers/promises';
import type * as k8s from '@kubernetes/client-node';
import { TermlabError, isTermlabError } from '../../lib/errors.ts';
import { createPod, type Cluster } from '../kube/index.ts';

export const DEFAULT_QUOTA_WAIT_MS = 120_000;
const FIRST_DELAY_MS = 1_000;
const MAX_DELAY_MS = 15_000;
// Each list is key=value pairs joined by ',' without spaces (the API server's own format).
const EXCEEDED = /exceeded quota: ([^,\s]+), requested: (\S+), used: (\S+), limited: ([^\s"]+)/;

export interface QuotaRefusal {
  quota: string;
  requested: Record<string, string>;
  used: Record<string, string>;
  limited: Record<string, string>;
}

const pairs = (text: string) =>
  Object.fromEntries(
    text
      .split(',')
      .map((p) => p.trim().split('=') as [string, string])
      .filter((p) => p.length === 2),
  );

/** The quota refusal in an API error's text, or null for any other failure. */
export function quotaRefusal(error: unknown): QuotaRefusal | null {
  const status = isTermlabError(error) ? error.context.status : null;
  if (status !== 403) return null;
  const m = EXCEEDED.exec((error as Error).message);
  return m ? { quota: m[1]!.trim(), requested: pairs(m[2]!), used: pairs(m[3]!), limited: pairs(m[4]!) } : null;
}

/** "40 of 40 pods in use": each limit the refusal names. */
function usageText(r: QuotaRefusal): string {
  return Object.keys(r.limited)
    .map((key) => `${r.used[key] ?? '?'} of ${r.limited[key]} ${key} in use`)
    .join(', ');
}

export async function createPodWithinQuota(
  cluster: Cluster,
  namespace: string,
  body: k8s.V1Pod,
  options: {
    signal?: AbortSignal;
    maxWaitMs?: number;
    onWait?: (text: string) => void;
    onReadBack?: () => void;
    now?: () => number;
  } = {},
): Promise<k8s.V1Pod> {
  const now = options.now ?? Date.now;
  const maxWaitMs = options.maxWaitMs ?? DEFAULT_QUOTA_WAIT_MS;
  const started = now();
  let delay = FIRST_DELAY_MS;
  for (;;) {
    try {
      return await createPod(cluster, namespace, body, { signal: options.signal, onReadBack: options.onReadBack });
    } catch (error) {
      const refusal = quotaRefusal(error);
      if (!refusal) throw error;
      const waited = now() - started;
      if (waited + delay > maxWaitMs) {
        throw new TermlabError(
          'QUOTA_FULL',
          `the class quota ${refusal.quota} in ${namespace} stayed full for ${Math.round(waited / 1000)} s (bound ${Math.round(maxWaitMs / 1000)} s, --quota-wait): ${usageText(refusal)}; try again when classmates' runs have ended, or ask the instructor`,
          { quota: refusal.quota, namespace, status: 403 },
          { cause: error },
        );
      }
      options.onWait?.(
        `waiting for the class quota: ${usageText(refusal)} (${refusal.quota} in ${namespace}); trying again in ${delay / 1000} s`,
      );
      await sleep(delay, undefined, { signal: options.signal }).catch(() => {
        throw new TermlabError('INTERRUPTED', 'interrupted while waiting for the class quota');
      });
      delay = Math.min(delay * 2, MAX_DELAY_MS);
    }
  }
}
