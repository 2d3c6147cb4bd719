// pkg/controller/deployment/util/deployment_util.go (1.34): the arithmetic of a rolling update,
// the revision and replica annotations, the template hash and the status conditions.
import { canonicalJson, fnv32a, safeEncodeString } from './names.ts';
import type { KubeObject } from './store.ts';
import { apiTime } from './time.ts';
import { scaledValue } from './workloads.ts';

export const REVISION = 'deployment.kubernetes.io/revision';
export const DESIRED_REPLICAS = 'deployment.kubernetes.io/desired-replicas';
export const MAX_REPLICAS = 'deployment.kubernetes.io/max-replicas';
export const POD_TEMPLATE_HASH = 'pod-template-hash';
/** annotationsToSkip: never copied from a Deployment to its ReplicaSets. */
const SKIPPED = new Set([
  'kubectl.kubernetes.io/last-applied-configuration',
  REVISION,
  'deployment.kubernetes.io/revision-history',
  DESIRED_REPLICAS,
  MAX_REPLICAS,
  'deprecated.deployment.rollback.to',
]);

const isRollingUpdate = (d: KubeObject) => d.spec.strategy?.type === 'RollingUpdate';

/** ResolveFenceposts: surge rounds up, unavailable down; both zero means unavailable 1. */
function resolveFenceposts(d: KubeObject): [number, number] {
  const ru = d.spec.strategy.rollingUpdate ?? {};
  const surge = scaledValue(ru.maxSurge, d.spec.replicas, true);
  let unavailable = scaledValue(ru.maxUnavailable, d.spec.replicas, false);
  if (surge === 0 && unavailable === 0) unavailable = 1;
  return [surge, unavailable];
}

export function maxUnavailable(d: KubeObject): number {
  if (!isRollingUpdate(d) || d.spec.replicas === 0) return 0;
  return Math.min(resolveFenceposts(d)[1], d.spec.replicas);
}

export function maxSurge(d: KubeObject): number {
  if (!isRollingUpdate(d)) return 0;
  return resolveFenceposts(d)[0];
}

export const replicaCount = (rss: KubeObject[]) => rss.reduce((n, rs) => n + (rs.spec.replicas ?? 0), 0);
export const actualReplicaCount = (rss: KubeObject[]) => rss.reduce((n, rs) => n + (rs.status?.replicas ?? 0), 0);
export const readyReplicaCount = (rss: KubeObject[]) => rss.reduce((n, rs) => n + (rs.status?.readyReplicas ?? 0), 0);
export const availableReplicaCount = (rss: KubeObject[]) =>
  rss.reduce((n, rs) => n + (rs.status?.availableReplicas ?? 0), 0);

/** NewRSNewReplicas for RollingUpdate: as many as the surge allows, never past spec.replicas. */
export function newRSNewReplicas(d: KubeObject, allRSs: KubeObject[], newRS: KubeObject): number {
  if (!isRollingUpdate(d)) return d.spec.replicas;
  const maxTotalPods = d.spec.replicas + maxSurge(d);
  const currentPodCount = replicaCount(allRSs);
  if (currentPodCount >= maxTotalPods) return newRS.spec.replicas;
  const scaleUpCount = Math.min(maxTotalPods - currentPodCount, d.spec.replicas - newRS.spec.replicas);
  return newRS.spec.replicas + scaleUpCount;
}

/** controller.ComputeHash: fnv32a of the template (and the collision count), safe-encoded. */
export function computeHash(template: unknown, collisionCount?: number): string {
  const text = canonicalJson(template) + (collisionCount ? String(collisionCount) : '');
  return safeEncodeString(String(fnv32a(text)));
}

/** EqualIgnoreHash: templates equal once the pod-template-hash label is set aside. */
export function equalIgnoreHash(a: any, b: any): boolean {
  const strip = (t: any) => {
    const c = structuredClone(t ?? {});
    if (c.metadata?.labels) {
      delete c.metadata.labels[POD_TEMPLATE_HASH];
      if (!Object.keys(c.metadata.labels).length) delete c.metadata.labels;
    }
    return canonicalJson(c);
  };
  return strip(a) === strip(b);
}

/** ReplicaSetsByCreationTimestamp: oldest first, then by name. */
export function byCreation(a: KubeObject, b: KubeObject): number {
  const ta = Date.parse(a.metadata.creationTimestamp),
    tb = Date.parse(b.metadata.creationTimestamp);
  return ta !== tb ? ta - tb : a.metadata.name < b.metadata.name ? -1 : a.metadata.name > b.metadata.name ? 1 : 0;
}

/** FindNewReplicaSet: the oldest ReplicaSet whose template equals the Deployment's. */
export function findNewReplicaSet(d: KubeObject, rsList: KubeObject[]): KubeObject | undefined {
  return [...rsList].sort(byCreation).find((rs) => equalIgnoreHash(rs.spec.template, d.spec.template));
}

export const revisionOf = (o: KubeObject): number => Number(o.metadata.annotations?.[REVISION] ?? 0) || 0;
export const maxRevision = (rss: KubeObject[]) => Math.max(0, ...rss.map(revisionOf));

/** SetNewReplicaSetAnnotations: copy the Deployment's annotations, raise the revision, set the replica annotations on a new one. */
export function setNewReplicaSetAnnotations(
  d: KubeObject,
  rs: KubeObject,
  newRevision: string,
  exists: boolean,
): boolean {
  const annotations = (rs.metadata.annotations ??= {});
  let changed = false;
  for (const [k, v] of Object.entries((d.metadata.annotations ?? {}) as Record<string, string>)) {
    if (SKIPPED.has(k) || annotations[k] === v) continue;
    annotations[k] = v;
    changed = true;
  }
  if (Number(annotations[REVISION] ?? 0) < Number(newRevision)) {
    annotations[REVISION] = newRevision;
    changed = true;
  }
  if (!exists && setReplicasAnnotations(rs, d.spec.replicas, d.spec.replicas + maxSurge(d))) changed = true;
  return changed;
}

export function setReplicasAnnotations(rs: KubeObject, desired: number, max: number): boolean {
  const annotations = (rs.metadata.annotations ??= {});
  if (annotations[DESIRED_REPLICAS] === String(desired) && annotations[MAX_REPLICAS] === String(max)) return false;
  annotations[DESIRED_REPLICAS] = String(desired);
  annotations[MAX_REPLICAS] = String(max);
  return true;
}

/** SetDeploymentRevision. */
export function setDeploymentRevision(d: KubeObject, revision: string): boolean {
  const annotations = (d.metadata.annotations ??= {});
  if (annotations[REVISION] === revision) return false;
  annotations[REVISION] = revision;
  return true;
}

export interface Condition {
  type: string;
  status: string;
  reason: string;
  message: string;
  lastUpdateTime: string;
  lastTransitionTime: string;
}

export const getCondition = (status: any, type: string): Condition | undefined =>
  ((status?.conditions ?? []) as Condition[]).find((c) => c.type === type);

export function newCondition(type: string, status: string, reason: string, message: string): Condition {
  const now = apiTime();
  return { type, status, reason, message, lastUpdateTime: now, lastTransitionTime: now };
}

/** SetDeploymentCondition: keeps lastTransitionTime while the status stays; same status and reason is no change. */
export function setCondition(status: any, condition: Condition): void {
  const current = getCondition(status, condition.type);
  if (current && current.status === condition.status && current.reason === condition.reason) return;
  if (current && current.status === condition.status) condition.lastTransitionTime = current.lastTransitionTime;
  status.conditions = [
    ...((status.conditions ?? []) as Condition[]).filter((c) => c.type !== condition.type),
    condition,
  ];
}

/** DeploymentComplete. */
export function deploymentComplete(d: KubeObject, s: any): boolean {
  return (
    s.updatedReplicas === d.spec.replicas &&
    s.replicas === d.spec.replicas &&
    s.availableReplicas === d.spec.replicas &&
    s.observedGeneration >= Number(d.metadata.generation ?? 0)
  );
}

/** DeploymentProgressing: more updated, fewer old, more ready or more available pods than the last status. */
export function deploymentProgressing(d: KubeObject, s: any): boolean {
  const old = d.status ?? {};
  const oldOld = (old.replicas ?? 0) - (old.updatedReplicas ?? 0);
  const newOld = s.replicas - s.updatedReplicas;
  return (
    s.updatedReplicas > (old.updatedReplicas ?? 0) ||
    newOld < oldOld ||
    s.readyReplicas > (old.readyReplicas ?? 0) ||
    s.availableReplicas > (old.availableReplicas ?? 0)
  );
}
