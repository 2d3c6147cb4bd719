// A list-then-watch cache of one resource, as client-go's informers give Traefik its view
// (traefik pkg/provider/kubernetes/{gateway,ingress}/client.go). Each change calls onChange.
import type { Api } from '../../../server/kube-api.ts';

const RETRY_MS = 500;

export class Informer {
  /** The cache: namespace/name, or what `keyOf` says (pods by uid). */
  readonly items: Map<string, any>;
  private readonly keyOf: (o: any) => string;
  synced = false;
  private stopped = false;
  private abort: () => void = () => {};

  private readonly api: Api;
  /** The collection's path across namespaces, e.g. /apis/discovery.k8s.io/v1/endpointslices. */
  private readonly path: string;
  private readonly onChange: (type: string, object: any) => void;

  constructor(
    api: Api,
    path: string,
    onChange: (type: string, object: any) => void,
    items = new Map<string, any>(),
    keyOf: (o: any) => string = Informer.key,
  ) {
    this.items = items;
    this.keyOf = keyOf;
    this.api = api;
    this.path = path;
    this.onChange = onChange;
  }

  static key(o: any): string {
    return `${o.metadata.namespace ?? ''}/${o.metadata.name}`;
  }

  async start(): Promise<void> {
    await this.relist();
    void this.loop();
  }

  stop(): void {
    this.stopped = true;
    this.abort();
  }

  private async relist(): Promise<string> {
    const { status, body } = await this.api.call('GET', this.path);
    if (status !== 200) throw new Error(`GET ${this.path}: HTTP ${status}: ${body?.message ?? ''}`);
    this.items.clear();
    for (const o of body.items ?? []) this.items.set(this.keyOf(o), o);
    this.synced = true;
    this.version = body.metadata?.resourceVersion ?? '';
    this.onChange('SYNC', null);
    return this.version;
  }

  private version = '';

  private async loop(): Promise<void> {
    while (!this.stopped) {
      let expired = false;
      const started = Date.now();
      try {
        const w = this.api.watch(
          `${this.path}?watch=1&allowWatchBookmarks=true&resourceVersion=${this.version}`,
          (event) => {
            if (event.type === 'ERROR') {
              expired = true;
              return;
            }
            this.version = event.object?.metadata?.resourceVersion ?? this.version;
            if (event.type === 'BOOKMARK') return;
            const key = this.keyOf(event.object);
            if (event.type === 'DELETED') this.items.delete(key);
            else this.items.set(key, event.object);
            this.onChange(event.type, event.object);
          },
        );
        this.abort = w.abort;
        await w.ended;
      } catch {
        expired = true;
      }
      if (this.stopped) return;
      // A watch the server ended at once is not retried at once: no busy loop against an API that keeps closing it.
      if (!expired && Date.now() - started < RETRY_MS) await new Promise((r) => setTimeout(r, RETRY_MS));
      if (expired) {
        await new Promise((r) => setTimeout(r, RETRY_MS));
        try {
          await this.relist();
        } catch {
          // The API is away: try again.
        }
      }
    }
  }
}
