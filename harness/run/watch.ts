// A pod watch that reports its own life: connected, dropped, resumed, expired-relisted, gave-up.
// Those go into the observation: a gap in the watch is evidence too.
import * as k8s from '@kubernetes/client-node';
import type { Cluster } from '../kube.ts';
import type { WatchEvent } from '../observation.ts';
import { apiTimeString, type RunClock } from './clock.ts';

type Lifecycle = { event: 'connected' | 'dropped' | 'resumed' | 'expired-relisted' | 'gave-up'; at: ReturnType<RunClock['now']>; resourceVersion: string | null; detail?: string };

const MAX_RECONNECTS = 10;

export function toWatchEvent(type: WatchEvent['type'], pod: k8s.V1Pod, receivedAt: WatchEvent['receivedAt']): WatchEvent {
  return {
    type,
    resourceVersion: pod.metadata?.resourceVersion ?? '',
    receivedAt,
    uid: pod.metadata?.uid ?? null,
    phase: pod.status?.phase ?? null,
    conditions: (pod.status?.conditions ?? []).map((c) => ({ type: c.type, status: c.status })),
    deletionTimestamp: apiTimeString(pod.metadata?.deletionTimestamp),
    deletionGracePeriodSeconds: pod.metadata?.deletionGracePeriodSeconds ?? null,
    containers: (pod.status?.containerStatuses ?? []).map((c) => {
      const state = c.state?.terminated ? 'terminated' : c.state?.running ? 'running' : c.state?.waiting ? 'waiting' : 'unknown';
      return {
        name: c.name, state, ready: c.ready,
        ...(c.state?.terminated ? { exitCode: c.state.terminated.exitCode, reason: c.state.terminated.reason } : {}),
        ...(c.state?.waiting?.reason ? { reason: c.state.waiting.reason } : {}),
      };
    }),
  };
}

export class PodWatch {
  readonly events: WatchEvent[] = [];
  readonly pods: k8s.V1Pod[] = [];
  readonly lifecycle: Lifecycle[] = [];
  private lastVersion: string;
  private request: AbortController | null = null;
  private stopped = false;
  private reconnects = 0;
  /** Set by a 410 ERROR event: the next reconnect lists again instead of resuming. */
  private expired = false;
  private readonly waiters = new Set<() => void>();
  private readonly cluster: Cluster;
  private readonly namespace: string;
  private readonly name: string;
  private readonly clock: RunClock;

  constructor(cluster: Cluster, namespace: string, name: string, fromVersion: string, clock: RunClock) {
    this.cluster = cluster;
    this.namespace = namespace;
    this.name = name;
    this.lastVersion = fromVersion;
    this.clock = clock;
  }

  /** Resolves once the API server has answered the watch request. */
  async start(): Promise<void> {
    await this.connect('connected');
  }

  private async connect(event: 'connected' | 'resumed' | 'expired-relisted', detail?: string): Promise<void> {
    const watch = new k8s.Watch(this.cluster.kc);
    this.request = await watch.watch(`/api/v1/namespaces/${this.namespace}/pods`,
      { fieldSelector: `metadata.name=${this.name}`, resourceVersion: this.lastVersion, allowWatchBookmarks: true },
      (type: string, object: any) => this.onEvent(type, object),
      (error: unknown) => { void this.onDone(error); });
    this.lifecycle.push({ event, at: this.clock.now(), resourceVersion: this.lastVersion, ...(detail ? { detail } : {}) });
    this.wake();
  }

  private onEvent(type: string, object: any): void {
    if (type === 'BOOKMARK') { this.lastVersion = object?.metadata?.resourceVersion ?? this.lastVersion; return; }
    if (type === 'ERROR') {
      if (object?.code === 410) this.expired = true;
      return;
    }
    const pod = object as k8s.V1Pod;
    this.lastVersion = pod.metadata?.resourceVersion ?? this.lastVersion;
    this.pods.push(pod);
    this.events.push(toWatchEvent(type as WatchEvent['type'], pod, this.clock.now()));
    this.wake();
  }

  private async onDone(error: unknown): Promise<void> {
    if (this.stopped) return;
    const detail = error ? String((error as Error).message ?? error) : 'the server closed the watch';
    this.lifecycle.push({ event: 'dropped', at: this.clock.now(), resourceVersion: this.lastVersion, detail });
    while (!this.stopped) {
      if (++this.reconnects > MAX_RECONNECTS) {
        this.lifecycle.push({ event: 'gave-up', at: this.clock.now(), resourceVersion: this.lastVersion, detail: `${MAX_RECONNECTS} reconnects failed` });
        this.wake();
        return;
      }
      try {
        if (this.expired) {
          // 410: our version is gone from the server's history. List again and go on from there;
          // the listed state is recorded, and the gap is marked.
          this.expired = false;
          const list = await this.cluster.core.listNamespacedPod({ namespace: this.namespace, fieldSelector: `metadata.name=${this.name}` });
          for (const pod of list.items) {
            this.pods.push(pod);
            this.events.push(toWatchEvent('MODIFIED', pod, this.clock.now()));
          }
          const listedVersion = list.metadata?.resourceVersion ?? this.lastVersion;
          if (!list.items.length) {
            // Gone while we were not watching: record it as deleted, keeping pods and events aligned.
            const last = this.pods.at(-1) ?? {};
            this.pods.push(last);
            this.events.push({ ...toWatchEvent('DELETED', last, this.clock.now()), resourceVersion: listedVersion });
          }
          this.lastVersion = listedVersion;
          await this.connect('expired-relisted', `410 Expired; relisted at ${listedVersion}`);
        } else {
          await this.connect('resumed');
        }
        return;
      } catch (reconnectError) {
        this.lifecycle.push({ event: 'dropped', at: this.clock.now(), resourceVersion: this.lastVersion, detail: String((reconnectError as Error).message) });
        await new Promise((resolve) => setTimeout(resolve, Math.min(2000, 100 * 2 ** this.reconnects)));
      }
    }
  }

  private wake(): void {
    for (const waiter of this.waiters) waiter();
  }

  get gaveUp(): boolean {
    return this.lifecycle.some((l) => l.event === 'gave-up');
  }

  /** Waits for a pod event that matches, the deadline, or the abort signal. */
  waitFor(match: (pod: k8s.V1Pod, type: string) => boolean, timeoutMs: number, signal?: AbortSignal): Promise<k8s.V1Pod | null> {
    return new Promise((resolve) => {
      const check = () => {
        const index = this.pods.findIndex((p, i) => match(p, this.events[i]?.type ?? 'MODIFIED'));
        if (index >= 0) { done(); resolve(this.pods[index]!); }
        else if (this.gaveUp || signal?.aborted) { done(); resolve(null); }
      };
      const timer = setTimeout(() => { done(); resolve(null); }, timeoutMs);
      const onAbort = () => check();
      const done = () => { clearTimeout(timer); this.waiters.delete(check); signal?.removeEventListener('abort', onAbort); };
      this.waiters.add(check);
      signal?.addEventListener('abort', onAbort);
      check();
    });
  }

  stop(): void {
    this.stopped = true;
    this.request?.abort();
    this.wake();
  }
}
