// The kubelet's removal of dead containers, each with its log: the pod container deletor on the PLEG's
// ContainerDied (kubelet.go cleanUpContainersInPod, pod_container_deletor.go), and the container GC every
// ContainerGCPeriod (kubelet.go, kuberuntime_gc.go) for what the deletor kept.
import type { KubeletPause } from './faults.ts';
import { type PodWorker, reached } from './pod-worker.ts';

/** kubelet.go ContainerGCPeriod. */
const CONTAINER_GC_PERIOD_MS = 60_000;

/**
 * cleanUpContainersInPod (kubelet.go, on the PLEG's ContainerDied): once a deleted pod's worker has
 * terminated it (ShouldPodContentBeRemoved: IsDeleted and IsTerminated), every dead container goes,
 * its log with it; otherwise the one dead container is kept until the container GC finds the pod so.
 * Seen on the real node (v1.37.2, 2026-12-01): a deleted pod's container exited 0, and from then on
 * GET pods/log answered 200 with only "unable to retrieve container logs for containerd://<id>" (the
 * container was gone from containerd) — what a log read after an API outage got (issue 21).
 */
export function cleanUpContainersInPod(worker: PodWorker): void {
  if (!worker.deleted || !reached(worker, 'finished')) return;
  for (const c of worker.containers.values()) {
    if (!c.process.hasExited) continue;
    c.removed = true;
    c.process.removeLog();
  }
}

/** The container GC's period: what cleanUpContainersInPod left, it removes; a stopped kubelet collects nothing. */
export class ContainerGC {
  private readonly timer: NodeJS.Timeout;

  constructor(workers: () => Iterable<PodWorker>, pause: KubeletPause) {
    this.timer = setInterval(() => {
      if (!pause.paused) for (const worker of workers()) cleanUpContainersInPod(worker);
    }, CONTAINER_GC_PERIOD_MS);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
  }
}
