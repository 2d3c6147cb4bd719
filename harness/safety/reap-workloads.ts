// A rollout's Deployment and Service (and an edge scenario's HTTPRoute or Ingress) outlive a killed run:
// they carry no deadline the cluster enforces (the API forbids activeDeadlineSeconds in a ReplicaSet's
// template), and the Deployment would make its pods again. They carry an expiry annotation instead, and
// the same rules as pods hold: only this owner's, judged by the run's record or, without one, by that
// expiry alone.
import {
  apiErrorText,
  classify,
  COLLECTIONS,
  type Cluster,
  deleteDeployment,
  deleteRoute,
  deleteService,
  listObjects,
  SERVICES,
} from '../kube/index.ts';
import { environmentSelector, OWNER_LABEL, ownerSelector, RUN_LABEL } from './labels.ts';
import type { ReapAllEntry, ReapEntry } from './reap-core.ts';
import { liveness, readRun } from './runs.ts';

/** When a rollout's objects may be taken without a record of their run (RFC 3339). */
export const EXPIRES_ANNOTATION = 'termlab.io/expires-at';

type Kind = 'deployment' | 'service' | 'httproute' | 'ingress';

/** Where an edge scenario's routes are listed (harness/kube/edge-routes.ts creates them). */
const ROUTES = {
  httproute: (ns: string) => `/apis/gateway.networking.k8s.io/v1/namespaces/${ns}/httproutes`,
  ingress: (ns: string) => `/apis/networking.k8s.io/v1/namespaces/${ns}/ingresses`,
} as const;

/** A role without the rollout or edge lab's rights (or an API without the kind: no Gateway API) has none to reap. */
async function listOrNone(cluster: Cluster, path: string, selector: string) {
  try {
    return await listObjects(cluster, path, selector);
  } catch (error) {
    const status = classify(error).status;
    if (status === 403 || status === 404) return [];
    throw error;
  }
}

async function listOwned(cluster: Cluster, namespace: string, selector: string) {
  const [deployments, services, httproutes, ingresses] = await Promise.all([
    listOrNone(cluster, COLLECTIONS.deployments(namespace), selector),
    listOrNone(cluster, SERVICES(namespace), selector),
    listOrNone(cluster, ROUTES.httproute(namespace), selector),
    listOrNone(cluster, ROUTES.ingress(namespace), selector),
  ]);
  return [
    ...deployments.map((o) => ({ ...o, kind: 'deployment' as Kind })),
    ...services.map((o) => ({ ...o, kind: 'service' as Kind })),
    ...httproutes.map((o) => ({ ...o, kind: 'httproute' as Kind })),
    ...ingresses.map((o) => ({ ...o, kind: 'ingress' as Kind })),
  ];
}

async function remove(
  cluster: Cluster,
  namespace: string,
  o: { kind: Kind; name: string; uid: string },
): Promise<'deleted' | 'gone'> {
  switch (o.kind) {
    case 'deployment':
      return deleteDeployment(cluster, namespace, o.name, o.uid);
    case 'service':
      return deleteService(cluster, namespace, o.name, o.uid);
    default:
      return deleteRoute(cluster, namespace, o.kind, o.name, o.uid);
  }
}

export async function reapWorkloads(
  cluster: Cluster,
  namespace: string,
  owner: string,
  options: { dryRun?: boolean; exceptRun?: string; now?: () => number } = {},
): Promise<ReapEntry[]> {
  const now = options.now ?? Date.now;
  const entries: ReapEntry[] = [];
  for (const o of await listOwned(cluster, namespace, ownerSelector(owner))) {
    const run = o.labels[RUN_LABEL] ?? null;
    const entry = (result: ReapEntry['result'], why: string) =>
      entries.push({ pod: `${o.kind}/${o.name}`, run, result, why });
    if (o.deleting) {
      entry('skipped', 'already being deleted');
      continue;
    }
    if (run && run === options.exceptRun) {
      entry('skipped', 'belongs to this run');
      continue;
    }
    const record = run ? await readRun(run) : null;
    let take: boolean, why: string;
    if (record) {
      const life = liveness(record);
      take = !life.alive;
      why = life.why;
    } else {
      const expires = Date.parse(o.annotations[EXPIRES_ANNOTATION] ?? '');
      take = Number.isFinite(expires) && expires < now();
      why = Number.isFinite(expires)
        ? take
          ? `run ${run ?? '?'} is unknown here and its objects expired at ${o.annotations[EXPIRES_ANNOTATION]}`
          : `no record of run ${run ?? '?'} here; it expires at ${o.annotations[EXPIRES_ANNOTATION]}`
        : `no record of run ${run ?? '?'} here and no ${EXPIRES_ANNOTATION}`;
    }
    if (!take) {
      entry('skipped', why);
      continue;
    }
    if (options.dryRun) {
      entry('would delete', why);
      continue;
    }
    try {
      entry((await remove(cluster, namespace, o)) === 'gone' ? 'skipped' : 'deleted', why);
    } catch (error) {
      entry('failed', `${apiErrorText(error)} (it will be tried again next time)`);
    }
  }
  return entries;
}

/** The end of a run: its own Deployments, Services and routes that cleanup could not remove, deleted now. */
export async function sweepRunWorkloads(cluster: Cluster, namespace: string, runId: string): Promise<void> {
  for (const o of await listOwned(cluster, namespace, `${RUN_LABEL}=${runId}`))
    if (!o.deleting) await remove(cluster, namespace, o);
}

/**
 * The class-wide reaper's part (`reap --all-owners`): every owner's Deployments, Services and routes of this
 * environment whose expiry has passed. Without an expiry nothing is guessed; the delete carries the
 * listed UID, so an object replaced since the list is left alone.
 */
export async function reapExpiredWorkloadsOfEnv(
  cluster: Cluster,
  namespace: string,
  env: string,
  options: { dryRun?: boolean; now?: () => number } = {},
): Promise<ReapAllEntry[]> {
  const now = options.now ?? Date.now;
  const entries: ReapAllEntry[] = [];
  for (const o of await listOwned(cluster, namespace, environmentSelector(env))) {
    const entry = (result: ReapAllEntry['result'], why: string) =>
      entries.push({
        pod: `${o.kind}/${o.name}`,
        owner: o.labels[OWNER_LABEL] ?? null,
        run: o.labels[RUN_LABEL] ?? null,
        result,
        why,
      });
    if (o.deleting) {
      entry('skipped', 'already being deleted');
      continue;
    }
    const stamp = o.annotations[EXPIRES_ANNOTATION];
    const expires = Date.parse(stamp ?? '');
    if (!Number.isFinite(expires)) {
      entry('skipped', `no ${EXPIRES_ANNOTATION}: never guessed at`);
      continue;
    }
    if (expires >= now()) {
      entry('skipped', `it expires at ${stamp}`);
      continue;
    }
    if (options.dryRun) {
      entry('would delete', `it expired at ${stamp}`);
      continue;
    }
    try {
      entry((await remove(cluster, namespace, o)) === 'gone' ? 'skipped' : 'deleted', `it expired at ${stamp}`);
    } catch (error) {
      entry('failed', `${apiErrorText(error)} (it will be tried again next time)`);
    }
  }
  return entries;
}
