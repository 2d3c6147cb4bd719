// The Deployment controller (pkg/controller/deployment, 1.34): deployment_controller.go syncDeployment,
// sync.go (new ReplicaSet, scaling, cleanup, status), rolling.go, recreate.go and progress.go.
import { Controller, controllerOf, controllerRef, keyOf, sameJson, splitKey } from './controller-queue.ts';
import * as util from './deployment-util.ts';
import { recordEvent } from './events.ts';
import type { ObjectRegistry } from './objects.ts';
import type { KubeObject, Store } from './store.ts';
import { selectorMatches } from './workloads.ts';

const COMPONENT = 'deployment-controller';
const active = (rss: KubeObject[]) => rss.filter((rs) => (rs.spec.replicas ?? 0) > 0);

export class DeploymentController extends Controller {
  private readonly objects: ObjectRegistry;
  protected readonly syncHandler = this.syncDeployment;

  constructor(store: Store, objects: ObjectRegistry) {
    super(COMPONENT, store);
    this.objects = objects;
    this.addEventHandler('deployments', (e) => this.enqueue(e.object));
    this.addEventHandler('replicasets', (e) => this.replicaSetChanged(e.object));
    // deletePod: a Recreate rollout waits for the old pods to be gone.
    this.addEventHandler('pods', (e) => {
      const owner = controllerOf(e.object);
      if (e.type !== 'DELETED' || owner?.kind !== 'ReplicaSet') return;
      const rs = this.store.get('replicasets', e.object.metadata.namespace, owner.name);
      if (rs) this.replicaSetChanged(rs);
    });
  }

  /** A ReplicaSet's owner, or for an orphan every Deployment whose selector matches it, needs a sync. */
  private replicaSetChanged(rs: KubeObject): void {
    this.enqueueOwnerOrAdopters(rs, 'Deployment', 'deployments');
  }

  private syncDeployment(key: string): void {
    const [namespace, name] = splitKey(key);
    const d = this.store.get('deployments', namespace, name);
    if (!d) return;
    const rsList = this.claimReplicaSets(d);
    if (d.metadata.deletionTimestamp) return this.syncStatusOnly(d, rsList);
    if (d.spec.paused || this.isScalingEvent(d, rsList)) return this.sync(d, rsList);
    if (d.spec.strategy.type === 'Recreate') return this.rolloutRecreate(d, rsList);
    return this.rolloutRolling(d, rsList);
  }

  /** getReplicaSetsForDeployment: ControllerRefManager.ClaimReplicaSets. */
  private claimReplicaSets(d: KubeObject): KubeObject[] {
    const claimed: KubeObject[] = [];
    for (const rs of this.store.list('replicasets', d.metadata.namespace!)) {
      const owner = controllerOf(rs);
      const matches = selectorMatches(d.spec.selector, rs.metadata.labels);
      if (owner && owner.uid !== d.metadata.uid) continue;
      if (owner && matches) {
        claimed.push(rs);
        continue;
      }
      if (owner && !matches) {
        rs.metadata.ownerReferences = (rs.metadata.ownerReferences as any[]).filter((r) => r.uid !== d.metadata.uid);
        this.store.update('replicasets', rs);
        continue;
      }
      if (matches && !d.metadata.deletionTimestamp && !rs.metadata.deletionTimestamp) {
        rs.metadata.ownerReferences = [...((rs.metadata.ownerReferences ?? []) as any[]), controllerRef(d)];
        claimed.push(this.store.update('replicasets', rs));
      }
    }
    return claimed;
  }

  /** isScalingEvent: an active ReplicaSet's desired-replicas annotation differs from spec.replicas. */
  private isScalingEvent(d: KubeObject, rsList: KubeObject[]): boolean {
    const { newRS, oldRSs } = this.getAllReplicaSetsAndSyncRevision(d, rsList, false);
    return active([...oldRSs, ...(newRS ? [newRS] : [])]).some((rs) => {
      const desired = rs.metadata.annotations?.[util.DESIRED_REPLICAS];
      return desired !== undefined && Number(desired) !== d.spec.replicas;
    });
  }

  private getAllReplicaSetsAndSyncRevision(
    d: KubeObject,
    rsList: KubeObject[],
    create: boolean,
  ): { newRS: KubeObject | undefined; oldRSs: KubeObject[] } {
    const existing = util.findNewReplicaSet(d, rsList);
    const oldRSs = rsList.filter((rs) => rs.metadata.uid !== existing?.metadata.uid);
    return { newRS: this.getNewReplicaSet(d, oldRSs, existing, create), oldRSs };
  }

  /** getNewReplicaSet (sync.go): sync the existing one's annotations, or create it with the template hash. */
  private getNewReplicaSet(
    d: KubeObject,
    oldRSs: KubeObject[],
    existing: KubeObject | undefined,
    create: boolean,
  ): KubeObject | undefined {
    const newRevision = String(util.maxRevision(oldRSs) + 1);
    if (existing) {
      const copy = structuredClone(existing);
      const annotationsUpdated = util.setNewReplicaSetAnnotations(d, copy, newRevision, true);
      const minReadyUpdate = (copy.spec.minReadySeconds ?? 0) !== (d.spec.minReadySeconds ?? 0);
      if (annotationsUpdated || minReadyUpdate) {
        copy.spec.minReadySeconds = d.spec.minReadySeconds;
        return this.writeReplicaSet(copy);
      }
      let needsUpdate = util.setDeploymentRevision(d, copy.metadata.annotations?.[util.REVISION] ?? newRevision);
      if (!util.getCondition(d.status, 'Progressing')) {
        util.setCondition(
          (d.status ??= {}),
          util.newCondition(
            'Progressing',
            'True',
            'FoundNewReplicaSet',
            `Found new replica set "${copy.metadata.name}"`,
          ),
        );
        needsUpdate = true;
      }
      if (needsUpdate) this.writeDeployment(d);
      return copy;
    }
    if (!create) return undefined;
    const hash = util.computeHash(d.spec.template, d.status?.collisionCount);
    const template = structuredClone(d.spec.template);
    template.metadata = {
      ...template.metadata,
      labels: { ...template.metadata?.labels, [util.POD_TEMPLATE_HASH]: hash },
    };
    const selector = structuredClone(d.spec.selector);
    selector.matchLabels = { ...selector.matchLabels, [util.POD_TEMPLATE_HASH]: hash };
    const rs: KubeObject = {
      apiVersion: 'apps/v1',
      kind: 'ReplicaSet',
      metadata: {
        name: `${d.metadata.name}-${hash}`,
        namespace: d.metadata.namespace,
        labels: template.metadata.labels,
        ownerReferences: [controllerRef(d)],
        uid: '',
        resourceVersion: '',
        creationTimestamp: '',
      },
      spec: {
        replicas: 0,
        ...(d.spec.minReadySeconds ? { minReadySeconds: d.spec.minReadySeconds } : {}),
        selector,
        template,
      },
    };
    rs.spec.replicas = util.newRSNewReplicas(d, [...oldRSs, rs], rs);
    util.setNewReplicaSetAnnotations(d, rs, newRevision, false);
    const clash = this.store.get('replicasets', d.metadata.namespace, rs.metadata.name);
    if (clash) {
      // A ReplicaSet of that name with another template: a hash collision; count it and retry with a new hash.
      if (controllerOf(clash)?.uid === d.metadata.uid && util.equalIgnoreHash(clash.spec.template, d.spec.template))
        return clash;
      d.status = { ...d.status, collisionCount: (d.status?.collisionCount ?? 0) + 1 };
      this.writeDeployment(d);
      throw new Error(`hash collision for ReplicaSet ${rs.metadata.name}; collisionCount raised`);
    }
    const created = this.objects.createInternal('replicasets', rs);
    if (rs.spec.replicas > 0)
      recordEvent(
        this.store,
        d,
        COMPONENT,
        'Normal',
        'ScalingReplicaSet',
        `Scaled up replica set ${created.metadata.name} to ${rs.spec.replicas}`,
      );
    util.setDeploymentRevision(d, newRevision);
    util.setCondition(
      (d.status ??= {}),
      util.newCondition(
        'Progressing',
        'True',
        'NewReplicaSetCreated',
        `Created new replica set "${created.metadata.name}"`,
      ),
    );
    this.writeDeployment(d);
    return created;
  }

  /** rolloutRolling (rolling.go). */
  private rolloutRolling(d: KubeObject, rsList: KubeObject[]): void {
    const { newRS, oldRSs } = this.getAllReplicaSetsAndSyncRevision(d, rsList, true);
    if (!newRS) return;
    let allRSs = [...oldRSs, newRS];
    if (this.reconcileNewReplicaSet(allRSs, newRS, d))
      return this.syncRolloutStatus(this.fresh(allRSs), this.fresh([newRS])[0], d);
    allRSs = this.fresh(allRSs);
    if (this.reconcileOldReplicaSets(allRSs, active(this.fresh(oldRSs)), this.fresh([newRS])[0]!, d))
      return this.syncRolloutStatus(this.fresh(allRSs), this.fresh([newRS])[0], d);
    if (util.deploymentComplete(d, d.status ?? {})) this.cleanupDeployment(this.fresh(oldRSs), d);
    this.syncRolloutStatus(this.fresh(allRSs), this.fresh([newRS])[0], d);
  }

  private reconcileNewReplicaSet(allRSs: KubeObject[], newRS: KubeObject, d: KubeObject): boolean {
    if (newRS.spec.replicas === d.spec.replicas) return false;
    if (newRS.spec.replicas > d.spec.replicas) return this.scaleReplicaSetAndRecordEvent(newRS, d.spec.replicas, d);
    return this.scaleReplicaSetAndRecordEvent(newRS, util.newRSNewReplicas(d, allRSs, newRS), d);
  }

  private reconcileOldReplicaSets(
    allRSs: KubeObject[],
    oldRSs: KubeObject[],
    newRS: KubeObject,
    d: KubeObject,
  ): boolean {
    if (util.replicaCount(oldRSs) === 0) return false;
    const allPodsCount = util.replicaCount(allRSs);
    const minAvailable = d.spec.replicas - util.maxUnavailable(d);
    const newRSUnavailablePodCount = newRS.spec.replicas - (newRS.status?.availableReplicas ?? 0);
    const maxScaledDown = allPodsCount - minAvailable - newRSUnavailablePodCount;
    if (maxScaledDown <= 0) return false;
    // Unhealthy replicas first, otherwise they block the rollout (kubernetes#16737).
    const { oldRSs: cleaned, count: cleanupCount } = this.cleanupUnhealthyReplicas(oldRSs, d, maxScaledDown);
    const scaledDownCount = this.scaleDownOldReplicaSetsForRollingUpdate([...cleaned, newRS], cleaned, d);
    return cleanupCount + scaledDownCount > 0;
  }

  private cleanupUnhealthyReplicas(
    oldRSs: KubeObject[],
    d: KubeObject,
    maxCleanupCount: number,
  ): { oldRSs: KubeObject[]; count: number } {
    const sorted = [...oldRSs].sort(util.byCreation);
    let total = 0;
    for (const [i, rs] of sorted.entries()) {
      if (total >= maxCleanupCount) break;
      if (rs.spec.replicas === 0) continue;
      const available = rs.status?.availableReplicas ?? 0;
      if (rs.spec.replicas === available) continue;
      const count = Math.min(maxCleanupCount - total, rs.spec.replicas - available);
      this.scaleReplicaSetAndRecordEvent(rs, rs.spec.replicas - count, d);
      total += count;
      sorted[i] = this.fresh([rs])[0]!;
    }
    return { oldRSs: sorted, count: total };
  }

  private scaleDownOldReplicaSetsForRollingUpdate(allRSs: KubeObject[], oldRSs: KubeObject[], d: KubeObject): number {
    const minAvailable = d.spec.replicas - util.maxUnavailable(d);
    const availablePodCount = util.availableReplicaCount(allRSs);
    if (availablePodCount <= minAvailable) return 0;
    const totalScaleDownCount = availablePodCount - minAvailable;
    let total = 0;
    for (const rs of [...oldRSs].sort(util.byCreation)) {
      if (total >= totalScaleDownCount) break;
      if (rs.spec.replicas === 0) continue;
      const count = Math.min(rs.spec.replicas, totalScaleDownCount - total);
      this.scaleReplicaSetAndRecordEvent(rs, rs.spec.replicas - count, d);
      total += count;
    }
    return total;
  }

  /** rolloutRecreate (recreate.go): old ones to zero, wait until no old pod runs, then the new one up. */
  private rolloutRecreate(d: KubeObject, rsList: KubeObject[]): void {
    let { newRS, oldRSs } = this.getAllReplicaSetsAndSyncRevision(d, rsList, false);
    let scaledDown = false;
    for (const rs of active(oldRSs)) if (this.scaleReplicaSetAndRecordEvent(rs, 0, d)) scaledDown = true;
    if (scaledDown)
      return this.syncRolloutStatus(
        this.fresh([...oldRSs, ...(newRS ? [newRS] : [])]),
        newRS && this.fresh([newRS])[0],
        d,
      );
    if (this.oldPodsRunning(newRS, oldRSs))
      return this.syncRolloutStatus(
        this.fresh([...oldRSs, ...(newRS ? [newRS] : [])]),
        newRS && this.fresh([newRS])[0],
        d,
      );
    if (!newRS) ({ newRS, oldRSs } = this.getAllReplicaSetsAndSyncRevision(d, rsList, true));
    if (newRS && newRS.spec.replicas !== d.spec.replicas) this.scaleReplicaSetAndRecordEvent(newRS, d.spec.replicas, d);
    if (util.deploymentComplete(d, d.status ?? {})) this.cleanupDeployment(this.fresh(oldRSs), d);
    this.syncRolloutStatus(this.fresh([...oldRSs, ...(newRS ? [newRS] : [])]), newRS && this.fresh([newRS])[0], d);
  }

  private oldPodsRunning(newRS: KubeObject | undefined, oldRSs: KubeObject[]): boolean {
    if (oldRSs.some((rs) => (rs.status?.replicas ?? 0) > 0)) return true;
    const oldUids = new Set(oldRSs.map((rs) => rs.metadata.uid));
    return this.store
      .list('pods', oldRSs[0]?.metadata.namespace ?? newRS?.metadata.namespace ?? '', (p) =>
        oldUids.has(controllerOf(p)?.uid ?? ''),
      )
      .some((p) => p.status?.phase !== 'Failed' && p.status?.phase !== 'Succeeded');
  }

  /** sync (sync.go): scaling and paused deployments. */
  private sync(d: KubeObject, rsList: KubeObject[]): void {
    const { newRS, oldRSs } = this.getAllReplicaSetsAndSyncRevision(d, rsList, false);
    this.scale(d, newRS, oldRSs);
    if (d.spec.paused) this.cleanupDeployment(this.fresh(oldRSs), d);
    const allRSs = this.fresh([...oldRSs, ...(newRS ? [newRS] : [])]);
    const status = calculateStatus(allRSs, newRS && this.fresh([newRS])[0], d);
    if (!sameJson(status, d.status)) {
      d.status = status;
      this.writeDeployment(d);
    }
  }

  /** scale (sync.go): one active ReplicaSet takes it all; otherwise proportional scaling. */
  private scale(d: KubeObject, newRS: KubeObject | undefined, oldRSs: KubeObject[]): void {
    const byNewest = [...oldRSs].sort((a, b) => util.byCreation(b, a));
    const all = active([...byNewest, ...(newRS ? [newRS] : [])]);
    if (all.length <= 1) {
      const target = all[0] ?? newRS ?? byNewest[0];
      if (target && target.spec.replicas !== d.spec.replicas)
        this.scaleReplicaSetAndRecordEvent(target, d.spec.replicas, d);
      return;
    }
    if (
      newRS &&
      newRS.spec.replicas === d.spec.replicas &&
      newRS.metadata.annotations?.[util.DESIRED_REPLICAS] === String(d.spec.replicas) &&
      newRS.status?.availableReplicas === d.spec.replicas
    ) {
      for (const rs of active(oldRSs)) this.scaleReplicaSetAndRecordEvent(rs, 0, d);
      return;
    }
    if (d.spec.strategy.type !== 'RollingUpdate') return;
    const allowedSize = d.spec.replicas > 0 ? d.spec.replicas + util.maxSurge(d) : 0;
    const toAdd = allowedSize - util.replicaCount(all);
    const created = (rs: KubeObject) => Date.parse(rs.metadata.creationTimestamp);
    // Larger first; equal sizes newer first when scaling up, older first when scaling down.
    all.sort(
      (a, b) => b.spec.replicas - a.spec.replicas || (toAdd > 0 ? created(b) - created(a) : created(a) - created(b)),
    );
    const operation = toAdd > 0 ? 'up' : 'down';
    let added = 0;
    const sizes = all.map((rs) => {
      if (toAdd === 0) return rs.spec.replicas;
      const proportion = getProportion(rs, d, toAdd, added);
      added += proportion;
      return rs.spec.replicas + proportion;
    });
    if (toAdd !== 0) sizes[0] = Math.max(0, sizes[0]! + toAdd - added);
    for (const [i, rs] of all.entries()) this.scaleReplicaSet(rs, sizes[i]!, d, operation);
  }

  private scaleReplicaSetAndRecordEvent(rs: KubeObject, newScale: number, d: KubeObject): boolean {
    if (rs.spec.replicas === newScale) return false;
    return this.scaleReplicaSet(rs, newScale, d, rs.spec.replicas < newScale ? 'up' : 'down');
  }

  private scaleReplicaSet(rs: KubeObject, newScale: number, d: KubeObject, operation: string): boolean {
    const copy = structuredClone(rs);
    const sizeNeedsUpdate = copy.spec.replicas !== newScale;
    const annotationsNeedUpdate = util.setReplicasAnnotations(
      copy,
      d.spec.replicas,
      d.spec.replicas + util.maxSurge(d),
    );
    if (!sizeNeedsUpdate && !annotationsNeedUpdate) return false;
    const oldScale = copy.spec.replicas;
    copy.spec.replicas = newScale;
    const written = this.writeReplicaSet(copy);
    if (sizeNeedsUpdate)
      recordEvent(
        this.store,
        d,
        COMPONENT,
        'Normal',
        'ScalingReplicaSet',
        `Scaled ${operation} replica set ${written.metadata.name} to ${newScale} from ${oldScale}`,
      );
    return sizeNeedsUpdate;
  }

  /** cleanupDeployment: old ReplicaSets beyond revisionHistoryLimit, fully scaled down, are deleted. */
  private cleanupDeployment(oldRSs: KubeObject[], d: KubeObject): void {
    if (d.spec.revisionHistoryLimit === undefined || d.spec.revisionHistoryLimit === null) return;
    const cleanable = oldRSs
      .filter((rs) => !rs.metadata.deletionTimestamp)
      .sort((a, b) => util.revisionOf(a) - util.revisionOf(b) || util.byCreation(a, b));
    const diff = cleanable.length - d.spec.revisionHistoryLimit;
    for (const rs of cleanable.slice(0, Math.max(0, diff))) {
      if (
        (rs.status?.replicas ?? 0) !== 0 ||
        rs.spec.replicas !== 0 ||
        (rs.metadata.generation ?? 0) > (rs.status?.observedGeneration ?? 0)
      )
        continue;
      this.objects.delete('replicasets', rs.metadata.namespace!, rs.metadata.name, {
        preconditions: { uid: rs.metadata.uid },
      });
    }
  }

  private syncStatusOnly(d: KubeObject, rsList: KubeObject[]): void {
    const { newRS, oldRSs } = this.getAllReplicaSetsAndSyncRevision(d, rsList, false);
    const status = calculateStatus([...oldRSs, ...(newRS ? [newRS] : [])], newRS, d);
    if (!sameJson(status, d.status)) {
      d.status = status;
      this.writeDeployment(d);
    }
  }

  /** syncRolloutStatus (progress.go): status plus the Progressing condition. */
  private syncRolloutStatus(allRSs: KubeObject[], newRS: KubeObject | undefined, d: KubeObject): void {
    const status = calculateStatus(allRSs, newRS, d);
    const deadline = d.spec.progressDeadlineSeconds;
    const current = util.getCondition(d.status, 'Progressing');
    const complete = status.replicas === status.updatedReplicas && current?.reason === 'NewReplicaSetAvailable';
    if (deadline === undefined || deadline === null)
      status.conditions = (status.conditions ?? []).filter((c: any) => c.type !== 'Progressing');
    else if (!complete) {
      if (util.deploymentComplete(d, status)) {
        util.setCondition(
          status,
          util.newCondition(
            'Progressing',
            'True',
            'NewReplicaSetAvailable',
            newRS
              ? `ReplicaSet "${newRS.metadata.name}" has successfully progressed.`
              : `Deployment "${d.metadata.name}" has successfully progressed.`,
          ),
        );
      } else if (util.deploymentProgressing(d, status)) {
        const condition = util.newCondition(
          'Progressing',
          'True',
          'ReplicaSetUpdated',
          newRS
            ? `ReplicaSet "${newRS.metadata.name}" is progressing.`
            : `Deployment "${d.metadata.name}" is progressing.`,
        );
        if (current?.status === 'True') condition.lastTransitionTime = current.lastTransitionTime;
        status.conditions = [...(status.conditions ?? []).filter((c: any) => c.type !== 'Progressing'), condition];
      } else if (
        current &&
        current.reason !== 'ProgressDeadlineExceeded' &&
        Date.parse(current.lastUpdateTime) + deadline * 1000 < Date.now()
      ) {
        util.setCondition(
          status,
          util.newCondition(
            'Progressing',
            'False',
            'ProgressDeadlineExceeded',
            newRS
              ? `ReplicaSet "${newRS.metadata.name}" has timed out progressing.`
              : `Deployment "${d.metadata.name}" has timed out progressing.`,
          ),
        );
      }
    }
    if (!sameJson(status, d.status)) {
      d.status = status;
      this.writeDeployment(d);
    } else if (!util.deploymentComplete(d, status) && current?.lastUpdateTime && deadline) {
      // requeueStuckDeployment: look again when the deadline would pass.
      this.queue.addAfter(
        keyOf(d),
        Math.max(0, Date.parse(current.lastUpdateTime) + deadline * 1000 - Date.now()) + 1000,
      );
    }
  }

  /** The latest stored copies (the controller acts on its informer cache, which writes update at once here). */
  private fresh(rss: KubeObject[]): KubeObject[] {
    return rss.map((rs) => this.store.get('replicasets', rs.metadata.namespace, rs.metadata.name) ?? rs);
  }

  private writeReplicaSet(rs: KubeObject): KubeObject {
    const stored = this.store.mustGet('replicasets', rs.metadata.namespace, rs.metadata.name);
    if (!sameJson(stored.spec, rs.spec)) rs.metadata.generation = Number(stored.metadata.generation ?? 1) + 1;
    rs.status = stored.status;
    return this.store.update('replicasets', rs);
  }

  /** UpdateStatus: status and annotations (the deployment status strategy keeps spec and labels). */
  private writeDeployment(d: KubeObject): void {
    const stored = this.store.get('deployments', d.metadata.namespace, d.metadata.name);
    if (!stored || stored.metadata.uid !== d.metadata.uid) return;
    stored.status = d.status;
    stored.metadata.annotations = d.metadata.annotations;
    const written = this.store.update('deployments', stored);
    d.metadata.resourceVersion = written.metadata.resourceVersion;
  }
}

/** calculateStatus (sync.go). */
function calculateStatus(allRSs: KubeObject[], newRS: KubeObject | undefined, d: KubeObject): any {
  const available = util.availableReplicaCount(allRSs);
  const total = util.replicaCount(allRSs);
  const status: any = {
    observedGeneration: d.metadata.generation,
    replicas: util.actualReplicaCount(allRSs),
    updatedReplicas: newRS ? util.actualReplicaCount([newRS]) : 0,
    readyReplicas: util.readyReplicaCount(allRSs),
    availableReplicas: available,
    unavailableReplicas: Math.max(0, total - available),
    ...(d.status?.collisionCount ? { collisionCount: d.status.collisionCount } : {}),
    conditions: structuredClone(d.status?.conditions ?? []),
  };
  if (available >= d.spec.replicas - util.maxUnavailable(d)) {
    util.setCondition(
      status,
      util.newCondition('Available', 'True', 'MinimumReplicasAvailable', 'Deployment has minimum availability.'),
    );
  } else {
    util.setCondition(
      status,
      util.newCondition(
        'Available',
        'False',
        'MinimumReplicasUnavailable',
        'Deployment does not have minimum availability.',
      ),
    );
  }
  return status;
}

/** GetProportion / getReplicaSetFraction (deployment_util.go). */
function getProportion(rs: KubeObject, d: KubeObject, toAdd: number, added: number): number {
  if (rs.spec.replicas === 0 || toAdd === 0 || toAdd === added) return 0;
  let fraction: number;
  if (d.spec.replicas === 0) fraction = -rs.spec.replicas;
  else {
    const maxReplicas = d.spec.replicas + util.maxSurge(d);
    let before = Number(rs.metadata.annotations?.[util.MAX_REPLICAS] ?? 0);
    if (!before) before = d.status?.replicas ?? 0;
    fraction = before ? Math.round((rs.spec.replicas * maxReplicas) / before) - rs.spec.replicas : 0;
  }
  const allowed = toAdd - added;
  return toAdd > 0 ? Math.min(fraction, allowed) : Math.max(fraction, allowed);
}
