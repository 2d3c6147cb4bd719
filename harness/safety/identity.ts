// Who the cluster says the caller is (a SelfSubjectReview, authentication.k8s.io/v1): a run's owner
// label comes from it, so a pod carries the name the API server authenticated, not one termlab made
// up. Only a cluster that does not serve the API (older than 1.28, or the API turned off) falls back
// to termlab's own name, and the run record says so.
import { createHash } from 'node:crypto';
import { classify, selfSubjectReview, type Cluster } from '../kube/index.ts';
import { isLabelValue } from './labels.ts';

/** The identity's full name: a label value holds 63 characters, a username may hold many more. */
export const IDENTITY_ANNOTATION = 'termlab.io/identity';

export type Identity =
  | { source: 'SelfSubjectReview'; username: string; groups: string[] }
  | { source: 'termlab'; username: null; why: string };

/** Statuses that mean "this API server does not offer SelfSubjectReview", not "the API failed". */
const NOT_OFFERED = new Set([404, 405, 501]);

export async function whoAmI(cluster: Cluster, signal?: AbortSignal): Promise<Identity> {
  try {
    const review = await selfSubjectReview(cluster, { signal });
    const username = review.status?.userInfo?.username;
    if (!username) return { source: 'termlab', username: null, why: 'the SelfSubjectReview answer named no user' };
    return { source: 'SelfSubjectReview', username, groups: review.status?.userInfo?.groups ?? [] };
  } catch (error) {
    const status = classify(error).status ?? (error as { context?: { status?: number } }).context?.status ?? null;
    if (status !== null && NOT_OFFERED.has(status))
      return {
        source: 'termlab',
        username: null,
        why: `the API server does not serve SelfSubjectReview (HTTP ${status})`,
      };
    throw error;
  }
}

/**
 * The owner label for a username: characters a label value cannot hold become '-', and a name
 * that changed or is too long gets a short hash of the full name, so two names never share a label.
 */
export function ownerLabelFor(username: string): string {
  if (isLabelValue(username) && username !== '') return username;
  const hash = createHash('sha256').update(username).digest('hex').slice(0, 8);
  const safe = username.replace(/[^A-Za-z0-9._-]+/g, '-').replace(/^[^A-Za-z0-9]+|[^A-Za-z0-9]+$/g, '');
  const head = safe.slice(0, 63 - hash.length - 1).replace(/[^A-Za-z0-9]+$/, '');
  return head ? `${head}-${hash}` : `user-${hash}`;
}

export interface Ownership {
  owner: string;
  source: 'SelfSubjectReview' | '--owner' | 'termlab';
  identity: string | null;
  /** One line for the run's header and record: where the owner came from. */
  note: string;
}

/** The run's owner: the cluster's identity; --owner only names it differently (the identity stays in the annotation). */
export function ownershipOf(identity: Identity, ownerFlag: string | undefined, fallback: () => string): Ownership {
  if (identity.username !== null) {
    const fromCluster = ownerLabelFor(identity.username);
    if (ownerFlag === undefined || ownerFlag === fromCluster)
      return {
        owner: fromCluster,
        source: 'SelfSubjectReview',
        identity: identity.username,
        note: `the cluster says you are ${identity.username}`,
      };
    return {
      owner: ownerFlag,
      source: '--owner',
      identity: identity.username,
      note: `--owner ${ownerFlag}; the cluster says you are ${identity.username} (kept in the ${IDENTITY_ANNOTATION} annotation)`,
    };
  }
  if (ownerFlag !== undefined)
    return {
      owner: ownerFlag,
      source: '--owner',
      identity: null,
      note: `--owner ${ownerFlag}; the cluster did not say who you are: ${identity.why}`,
    };
  return { owner: fallback(), source: 'termlab', identity: null, note: `owner chosen by termlab: ${identity.why}` };
}
