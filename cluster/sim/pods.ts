// The pod registry: create with defaults, graceful delete (pkg/registry/core/pod/strategy.go
// CheckGracefulDelete), and patches that may touch only what a user may change.
import { randomUUID } from 'node:crypto';
import type { Faults } from './faults.ts';
import { FeatureGates } from './feature-gates.ts';
import { aggregate, dropContainerStopSignals, validateStopSignals } from './pod-util.ts';
import { DEFAULT_SIM_MINOR } from './versions.ts';
import { generateName } from './names.ts';
import { applyPatch } from './patch.ts';
import { ApiError, badRequest, conflict, invalid, notFound } from './status.ts';
import type { KubeObject, Store } from './store.ts';
import { apiTime, wallNow } from './time.ts';

const NAME = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

export interface DeleteOptions {
  gracePeriodSeconds?: number;
  preconditions?: { uid?: string; resourceVersion?: string };
  /** dryRun=All: the answer the delete would give; the pod is not touched and the kubelet not told. */
  dryRun?: boolean;
}

export class PodRegistry {
  private readonly store: Store;
  private readonly faults: Faults;
  private readonly gates: FeatureGates;

  constructor(store: Store, faults: Faults, gates: FeatureGates = new FeatureGates(DEFAULT_SIM_MINOR)) {
    this.store = store;
    this.faults = faults;
    this.gates = gates;
  }

  /** The lose-next-create-answer fault, taken by the API as it answers a create. */
  takeLostCreateAnswer(namespace: string): boolean {
    return this.faults.loseNextCreateAnswer.delete(namespace);
  }

  /** `dryRun`: validated and defaulted, answered as if made; nothing stored, nothing scheduled. */
  create(namespace: string, body: any, dryRun = false): KubeObject {
    if (!this.store.get('namespaces', undefined, namespace)) throw notFound('namespaces', namespace);
    if (!body || typeof body !== 'object') throw badRequest('the body must be a Pod object');
    if (body.kind !== undefined && body.kind !== 'Pod')
      throw badRequest(`expected kind Pod, got ${JSON.stringify(body.kind)}`);
    const metadata = { ...(body.metadata ?? {}) };
    if (!metadata.name && metadata.generateName) metadata.name = generateName(metadata.generateName);
    const name = String(metadata.name ?? '');
    if (!NAME.test(name) || name.length > 253)
      throw invalid('Pod', name, 'metadata.name: a lowercase RFC 1123 subdomain is required');
    if (metadata.namespace && metadata.namespace !== namespace)
      throw badRequest(
        `the namespace of the object (${metadata.namespace}) does not match the namespace on the request (${namespace})`,
      );
    const containers = body.spec?.containers;
    if (!Array.isArray(containers) || containers.length === 0)
      throw invalid('Pod', name, 'spec.containers: Required value');
    for (const [i, c] of containers.entries()) {
      if (!c?.name) throw invalid('Pod', name, `spec.containers[${i}].name: Required value`);
      if (!c?.image) throw invalid('Pod', name, `spec.containers[${i}].image: Required value`);
    }
    const inits = body.spec?.initContainers ?? [];
    if (!Array.isArray(inits)) throw invalid('Pod', name, 'spec.initContainers: must be a list');
    const names = new Set(containers.map((c: { name: string }) => c.name));
    for (const [i, c] of inits.entries()) {
      if (!c?.name) throw invalid('Pod', name, `spec.initContainers[${i}].name: Required value`);
      if (!c?.image) throw invalid('Pod', name, `spec.initContainers[${i}].image: Required value`);
      if (names.has(c.name))
        throw invalid('Pod', name, `spec.initContainers[${i}].name: Duplicate value: ${JSON.stringify(c.name)}`);
      names.add(c.name);
      // A real API takes run-to-completion init containers too; this kubelet runs only native sidecars, and says so.
      if (c.restartPolicy !== 'Always')
        throw invalid(
          'Pod',
          name,
          `spec.initContainers[${i}].restartPolicy: the simulated cluster runs only restartable init containers (restartPolicy: Always), got ${JSON.stringify(c.restartPolicy ?? null)}`,
        );
    }
    // PrepareForCreate's dropDisabledFields, then validation of what is left.
    const spec = structuredClone(body.spec);
    dropContainerStopSignals(spec, undefined, this.gates);
    const errors = validateStopSignals(spec);
    if (errors.length) throw invalid('Pod', name, aggregate(errors));
    const now = apiTime();
    const pod: KubeObject = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { ...metadata, name, namespace, uid: randomUUID(), resourceVersion: '', creationTimestamp: now },
      spec: {
        restartPolicy: 'Always',
        terminationGracePeriodSeconds: 30,
        dnsPolicy: 'ClusterFirst',
        schedulerName: 'default-scheduler',
        ...spec,
      },
      status: { phase: 'Pending', qosClass: 'BestEffort' },
    };
    delete pod.metadata.deletionTimestamp;
    delete pod.metadata.deletionGracePeriodSeconds;
    // The POST answers with the Pending pod; the scheduler and the kubelet follow from their informers.
    return this.store.create('pods', pod, dryRun);
  }

  /**
   * DropDisabledTemplateFields and the template's validation, for a Deployment's or ReplicaSet's pod template on
   * create (old undefined) and update: the same stopSignal rules as a pod's.
   */
  prepareTemplate(kind: string, name: string, template: any, oldTemplate: any): void {
    if (!template?.spec || typeof template.spec !== 'object') return;
    dropContainerStopSignals(template.spec, oldTemplate?.spec, this.gates);
    const errors = validateStopSignals(template.spec, 'spec.template.spec');
    if (errors.length) throw invalid(kind, name, aggregate(errors));
  }

  delete(namespace: string, name: string, options: DeleteOptions): KubeObject {
    const pod = this.store.mustGet('pods', namespace, name);
    const expectedUid = options.preconditions?.uid;
    if (expectedUid && expectedUid !== pod.metadata.uid) {
      throw conflict(
        'pods',
        name,
        `Precondition failed: UID in precondition: ${expectedUid}, UID in object meta: ${pod.metadata.uid}`,
      );
    }
    if (!options.dryRun && this.faults.takeDeleteFailure(namespace, name)) {
      throw new ApiError(
        500,
        'InternalError',
        `Internal error occurred: injected fault: delete of pods "${name}" failed`,
      );
    }
    let grace = options.gracePeriodSeconds ?? pod.spec.terminationGracePeriodSeconds ?? 30;
    if (grace < 0) grace = 1;
    const phase = pod.status?.phase;
    if (!pod.spec.nodeName || phase === 'Succeeded' || phase === 'Failed') grace = 0;
    const now = wallNow();
    const deletionTimestamp = apiTime(now + grace * 1000);
    if (pod.metadata.deletionTimestamp) {
      // A later delete may only shorten the grace.
      if (Date.parse(deletionTimestamp) >= Date.parse(pod.metadata.deletionTimestamp)) return pod;
    }
    pod.metadata.deletionTimestamp = deletionTimestamp;
    pod.metadata.deletionGracePeriodSeconds = grace;
    if (grace === 0 && !pod.metadata.finalizers?.length) {
      // Immediate deletion: the object goes now; the kubelet still stops whatever runs.
      return this.store.remove('pods', pod, options.dryRun);
    }
    return this.store.update('pods', pod, undefined, options.dryRun);
  }

  patch(namespace: string, name: string, contentType: string, body: unknown, dryRun = false): KubeObject {
    const pod = this.store.mustGet('pods', namespace, name);
    const patched = applyPatch(contentType, pod, body);
    // Only what a user may change on a live pod: labels, annotations, finalizers, owners, the deadline.
    const next = structuredClone(pod);
    next.metadata.labels = patched.metadata?.labels ?? undefined;
    next.metadata.annotations = patched.metadata?.annotations ?? undefined;
    next.metadata.finalizers = patched.metadata?.finalizers ?? undefined;
    next.metadata.ownerReferences = patched.metadata?.ownerReferences ?? undefined;
    if (patched.spec?.activeDeadlineSeconds !== pod.spec.activeDeadlineSeconds)
      next.spec.activeDeadlineSeconds = patched.spec?.activeDeadlineSeconds;
    const expected =
      patched.metadata?.resourceVersion !== pod.metadata.resourceVersion
        ? patched.metadata?.resourceVersion
        : undefined;
    // A deleting pod's last finalizer gone: with its grace already 0 (the kubelet's own delete came)
    // the API server deletes it in the update (registry store.go ShouldDeleteDuringUpdate: one DELETED,
    // the last stored object); otherwise the kubelet, once done with it, deletes it (its informer).
    if (
      pod.metadata.deletionTimestamp &&
      !pod.metadata.deletionGracePeriodSeconds &&
      !next.metadata.finalizers?.length
    ) {
      if (expected)
        throw conflict(
          'pods',
          name,
          'the object has been modified; please apply your changes to the latest version and try again',
        );
      return this.store.remove('pods', pod, dryRun);
    }
    return this.store.update('pods', next, expected, dryRun);
  }
}
