// SyncPod's init containers, after computeInitContainerActions in pkg/kubelet/kuberuntime/
// kuberuntime_container.go (1.37.2), for the one kind the sim runs: restartable init containers
// (restartPolicy: Always, native sidecars; pods.ts refuses the others). Written apart from
// harness/grade/theory.ts on purpose.
//
// computeInitContainerActions, as each SyncPod runs it until the pod has initialized, reduced to a
// pod's first start (the sim restarts no container):
// 1. No init containers: the pod has initialized.
// 2. Walk back from the last init container to the one started last (the kubelet starts one per sync).
// 3. Its status not yet in the pod cache (the PLEG has not seen it run): no action; its ContainerStarted
//    event syncs the pod again.
// 4. Running, with a startupProbe: while the startup manager has no Success for it, no action (a probe
//    result that changes syncs the pod: "SyncLoop (probe)"). A Failure would restart it: not simulated.
// 5. Running and started (no startupProbe, or it succeeded): "Init container has been initialized".
//    If it is the last init container, podHasInitialized: this same SyncPod starts the main containers;
//    else InitContainersToStart = [i+1]: this sync starts the next one.
// The status this sync writes (generateAPIPodStatus): the sidecar running, `started` once its startup is
// done, Initialized True once the last one is.
import type { PodSpec } from './pod-types.ts';
import type { ContainerSpec } from './pod-types.ts';
import { isRestartableInitContainer } from './termination-order.ts';

/** Where a pod's init containers are, kept by the pod worker. */
export interface InitProgress {
  /** Index of the init container started last; -1 before the first. */
  started: number;
  /** Index of the last one the PLEG has seen running. */
  seen: number;
  /** Names whose startupProbe has succeeded. */
  startupDone: Set<string>;
  /** Its status written as started (so each is written once as running, once as started). */
  published: Map<string, boolean>;
  initialized: boolean;
}

export const newInitProgress = (spec: PodSpec): InitProgress => ({
  started: -1,
  seen: -1,
  startupDone: new Set(),
  published: new Map(),
  initialized: !(spec.initContainers ?? []).length,
});

/** What this sync does about the init containers (steps 3-5 above). */
export type InitAction =
  | { kind: 'wait' }
  /** Write the sidecar's status (running; started or not), then start `next` (an init index) or the main containers. */
  | {
      kind: 'publish';
      container: ContainerSpec;
      started: boolean;
      initialized: boolean;
      then: { start: 'init'; index: number } | { start: 'main' } | null;
    };

/** Steps 2-5 for the pod as it is now; the caller carries the action out and moves `progress` on. */
export function computeInitContainerActions(spec: PodSpec, progress: InitProgress): InitAction {
  const inits = spec.initContainers ?? [];
  if (progress.initialized || progress.started < 0) return { kind: 'wait' };
  const i = progress.started;
  const container = inits[i]!;
  if (progress.seen < i) return { kind: 'wait' };
  const started = !container.startupProbe || progress.startupDone.has(container.name);
  const last = i === inits.length - 1;
  if (progress.published.get(container.name) === started) return { kind: 'wait' };
  const then = !started ? null : last ? { start: 'main' as const } : { start: 'init' as const, index: i + 1 };
  return { kind: 'publish', container, started, initialized: started && last, then };
}

/** The first sync's start: init container 0 when there is one, else the main containers. */
export function firstStart(spec: PodSpec): { start: 'init'; index: 0 } | { start: 'main' } {
  return (spec.initContainers ?? []).some(isRestartableInitContainer) ? { start: 'init', index: 0 } : { start: 'main' };
}
