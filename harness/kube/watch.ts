// A watch on one pod that reports its own life (connected, dropped, resumed, expired-relisted,
// gave-up), as kubernetes-fluent-client's does. A drop reconnects from the last resourceVersion
// with backoff and jitter inside the outage budget; a 410 lists again and goes on from there.
import { createInterface } from 'node:readline';
import type * as k8s from '@kubernetes/client-node';
import type { Cluster } from './connect.ts';
import { classify } from './failures.ts';
import { getText, openStream, type OpenStream } from './http.ts';
import { Backoff, BACKOFF_INITIAL_MS } from './retry.ts';

/** A connection that lived this long starts the backoff afresh (client-go's resetDuration). */
const BACKOFF_RESET_AFTER_MS = 120_000;

export type WatchLife = 'connected' | 'dropped' | 'resumed' | 'expired-relisted' | 'gave-up';
export type PodEventType = 'ADDED' | 'MODIFIED' | 'DELETED';

export interface WatchCallbacks<T> {
  event(type: PodEventType, object: T): void;
  /** `listed` is what a 410 relist found (empty: the objects are gone). */
  life(event: WatchLife, resourceVersion: string | null, detail?: string, listed?: T[]): void;
}
export type PodWatchCallbacks = WatchCallbacks<k8s.V1Pod>;

/** What to watch: a collection's path and its selectors. */
export interface WatchTarget {
  path: string;
  query: Record<string, string | undefined>;
}

/** A watch on a collection (one pod by name, or a label selector's objects), with its life reported. */
export class WatchStream<T extends { metadata?: { resourceVersion?: string } }> {
  private lastVersion: string;
  private stopped = false;
  private stream: OpenStream | null = null;
  private connectedAt = 0;
  /** Set by a 410 ERROR event: the next connection lists again instead of resuming. */
  private expired = false;
  private readonly backoff = new Backoff();
  protected readonly cluster: Cluster;
  private readonly target: WatchTarget;
  private readonly callbacks: WatchCallbacks<T>;

  constructor(cluster: Cluster, target: WatchTarget, fromVersion: string, callbacks: WatchCallbacks<T>) {
    this.cluster = cluster;
    this.target = target;
    this.lastVersion = fromVersion;
    this.callbacks = callbacks;
  }

  /** A list of the collection, for a 410 relist: its items and resourceVersion. One try: the caller retries. */
  protected async list(): Promise<{ items: T[]; resourceVersion: string | undefined }> {
    const list = JSON.parse(await getText(this.cluster, this.target.path, this.target.query)) as {
      items?: T[];
      metadata?: { resourceVersion?: string };
    };
    return { items: list.items ?? [], resourceVersion: list.metadata?.resourceVersion };
  }

  get resourceVersion(): string {
    return this.lastVersion;
  }

  /** Resolves once the API server has answered the watch, or the budget ran out (then 'gave-up'). */
  async start(): Promise<void> {
    await this.reconnect('connected', 0);
  }

  stop(): void {
    this.stopped = true;
    this.stream?.close();
  }

  private async connectOnce(): Promise<void> {
    const stream = await openStream(this.cluster, this.target.path, {
      ...this.target.query,
      watch: true,
      resourceVersion: this.lastVersion,
      allowWatchBookmarks: true,
    });
    if (this.stopped) {
      stream.close();
      return;
    }
    this.stream = stream;
    this.connectedAt = performance.now();
    let ended = false;
    const end = (detail: string) => {
      if (ended) return;
      ended = true;
      if (this.stream === stream) this.stream = null;
      if (!this.stopped) void this.onDrop(detail);
    };
    stream.response.on('error', (error) => end(classify(error).text));
    // readline passes the stream's error on to itself: handled above, so ignored here.
    createInterface({ input: stream.response })
      .on('line', (line) => this.onLine(line))
      .on('error', () => {})
      .on('close', () => end('the server closed the watch'));
  }

  private onLine(line: string): void {
    let message: { type?: string; object?: any };
    try {
      message = JSON.parse(line);
    } catch {
      return;
    }
    const { type, object } = message;
    if (type === 'BOOKMARK') {
      this.lastVersion = object?.metadata?.resourceVersion ?? this.lastVersion;
      return;
    }
    if (type === 'ERROR') {
      if (object?.code === 410) this.expired = true;
      return;
    }
    if (type !== 'ADDED' && type !== 'MODIFIED' && type !== 'DELETED') return;
    const item = object as T;
    this.lastVersion = item.metadata?.resourceVersion ?? this.lastVersion;
    // A connection that delivers events is healthy: the next outage starts from the first step.
    this.backoff.reset();
    this.callbacks.event(type, item);
  }

  private async onDrop(detail: string): Promise<void> {
    this.callbacks.life('dropped', this.lastVersion, detail);
    // A connection that lived a while is tried again at once (client-go does); a flapping one waits.
    const livedMs = performance.now() - this.connectedAt;
    if (livedMs >= BACKOFF_RESET_AFTER_MS) this.backoff.reset();
    // A 410 is an answer, not a failure: list again at once, as the reflector does.
    await this.reconnect('resumed', this.expired || livedMs >= BACKOFF_INITIAL_MS ? 0 : this.backoff.next());
  }

  private async reconnect(kind: 'connected' | 'resumed', firstWaitMs: number): Promise<void> {
    const health = this.cluster.health;
    const began = performance.now();
    let failingSince: number | null = null;
    let tries = 0;
    let waitMs = firstWaitMs;
    for (;;) {
      if (waitMs > 0) await health.pause(waitMs);
      if (this.stopped) return;
      tries++;
      try {
        let listed: T[] | undefined;
        let detail: string | undefined;
        if (this.expired) {
          // 410: our version is gone from the server's history. List again and go on from there.
          // One try: this loop is the retry.
          const list = await this.list();
          listed = list.items;
          this.lastVersion = list.resourceVersion ?? this.lastVersion;
          this.expired = false;
          detail = `410 Expired; relisted at ${this.lastVersion}`;
        }
        await this.connectOnce();
        health.answered();
        if (tries > 1 || kind === 'resumed') {
          const gap = `${tries} ${tries === 1 ? 'try' : 'tries'} over ${((performance.now() - began) / 1000).toFixed(1)}s`;
          detail = detail ? `${detail}; ${gap}` : gap;
        }
        this.callbacks.life(listed ? 'expired-relisted' : kind, this.lastVersion, detail, listed);
        return;
      } catch (error) {
        const failure = classify(error);
        if (!failure.transient) {
          this.callbacks.life('gave-up', this.lastVersion, failure.text);
          return;
        }
        health.failed(failure);
        failingSince ??= health.now();
        const left = health.deadline(failingSince) - health.now();
        if (left <= 0) {
          this.callbacks.life(
            'gave-up',
            this.lastVersion,
            `the API did not answer for ${Math.round((health.now() - failingSince) / 1000)}s (--api-patience ${health.patienceMs / 1000}s): ${failure.text}`,
          );
          return;
        }
        waitMs = Math.min(left, Math.max(this.backoff.next(), (failure.retryAfterSeconds ?? 0) * 1000));
      }
    }
  }
}

/** The scenario's one pod, by name: a 410 relists it through the base's own list, with the same selector. */
export class PodWatchStream extends WatchStream<k8s.V1Pod> {
  constructor(cluster: Cluster, namespace: string, name: string, fromVersion: string, callbacks: PodWatchCallbacks) {
    super(
      cluster,
      { path: `/api/v1/namespaces/${namespace}/pods`, query: { fieldSelector: `metadata.name=${name}` } },
      fromVersion,
      callbacks,
    );
  }
}
