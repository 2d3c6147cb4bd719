// Watches over HTTP: newline-delimited events, resumable from a resourceVersion, 410 when too old.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Faults } from './faults.ts';
import { apiVersionOf, RESOURCES } from './resources.ts';
import { statusObject } from './status.ts';
import type { KubeObject, Resource, Store, StoredEvent, Watcher } from './store.ts';

export interface WatchRequest {
  resource: Resource;
  namespace: string | null;
  matches: (o: KubeObject) => boolean;
  resourceVersion: string | null;
  timeoutSeconds: number | null;
  allowBookmarks: boolean;
  /** kubectl's `as=Table`: each event's object becomes a one-row Table. */
  asTable: ((o: KubeObject, first: boolean) => unknown) | null;
}

const BOOKMARK_INTERVAL_MS = 5_000;

export class WatchServer {
  private readonly open = new Set<ServerResponse>();
  private readonly store: Store;
  private readonly faults: Faults;

  constructor(store: Store, faults: Faults) {
    this.store = store;
    this.faults = faults;
  }

  serve(req: IncomingMessage, res: ServerResponse, w: WatchRequest): void {
    res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'no-cache, private' });
    res.flushHeaders();
    let first = true;
    const write = (type: string, object: unknown) => {
      if (res.writableEnded) return; // closed by stop() while the store still delivers
      const shown =
        w.asTable && type !== 'ERROR' && type !== 'BOOKMARK' ? w.asTable(object as KubeObject, first) : object;
      first = false;
      res.write(`${JSON.stringify({ type, object: shown })}\n`);
    };
    const from =
      w.resourceVersion === null || w.resourceVersion === '' || w.resourceVersion === '0'
        ? null
        : Number(w.resourceVersion);
    const replay = from === null ? null : Number.isFinite(from) ? this.store.eventsSince(from, w) : null;
    if (this.faults.takeWatchExpiry() || (from !== null && replay === null)) {
      write(
        'ERROR',
        statusObject(410, 'Expired', `too old resource version: ${w.resourceVersion} (${this.store.currentVersion})`),
      );
      res.end();
      return;
    }
    // No version: the current state as ADDED events, then changes (the API's "most recent" start).
    if (from === null) for (const object of this.store.list(w.resource, w.namespace, w.matches)) write('ADDED', object);
    for (const event of replay ?? []) write(event.type, event.object);
    const watcher: Watcher = { ...w, send: (event: StoredEvent) => write(event.type, event.object) };
    this.store.watchers.add(watcher);
    this.open.add(res);
    const timers: NodeJS.Timeout[] = [];
    if (w.timeoutSeconds) timers.push(setTimeout(() => res.end(), w.timeoutSeconds * 1000));
    if (w.allowBookmarks) {
      timers.push(
        setInterval(
          () =>
            write('BOOKMARK', {
              kind: RESOURCES[w.resource].kind,
              apiVersion: apiVersionOf(w.resource),
              metadata: { resourceVersion: this.store.currentVersion },
            }),
          BOOKMARK_INTERVAL_MS,
        ),
      );
    }
    const close = () => {
      this.store.watchers.delete(watcher);
      this.open.delete(res);
      for (const t of timers) clearTimeout(t);
    };
    res.on('close', close);
    req.on('close', close);
  }

  /** Fault: cut every open watch connection, as an API server restart would. */
  dropAll(): number {
    const count = this.open.size;
    for (const res of this.open) res.socket?.destroy();
    return count;
  }

  closeAll(): void {
    for (const res of this.open) res.end();
  }
}
