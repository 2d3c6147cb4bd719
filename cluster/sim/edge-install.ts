// `startSimCluster({ edge: true })` and `termlab sim --edge`: the edge's manifest (manifests/edge/traefik.yaml, the
// same objects as on the real node) created through the sim's own API, as kubectl would, then waited on until
// Traefik's pod is Ready. The traefik image runs the sim's edge (cluster/sim/edge/main.ts) with the in-cluster
// access a ServiceAccount mount would give: the API server's address, a token and its CA in a private folder.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { readFileSync } from 'node:fs';
import { packagePath } from '../../lib/package-root.ts';
import { inform } from './controller-queue.ts';
import { RESOURCES } from './resources.ts';
import { EDGE_IMAGE_REPOSITORY, edgeBundle, edgeImage, type ImageMap } from './runtime.ts';
import type { KubeObject, Resource, Store } from './store.ts';

export const EDGE_MANIFEST = 'manifests/edge/traefik.yaml';
export const EDGE_NAMESPACE = 'termlab-edge';
export const EDGE_SERVICE = 'traefik';
const EDGE_LABEL = 'app.kubernetes.io/name';
const READY_TIMEOUT_MS = 60_000;
/** Between tries of the NodePort while the service proxy has not synced the edge's endpoint yet. */
const PROXY_RETRY_MS = 25;

export interface SimEdge {
  namespace: string;
  /** The Service's NodePort on 127.0.0.1: the manifest's 30080, or another when 30080 is taken on this machine. */
  nodePort: number;
  /** The Service's ClusterIP (not routable in the sim: in-cluster clients use 127.0.0.1:nodePort). */
  clusterIP: string;
}

/** The traefik image, with the sim's in-cluster access; the folder goes when the process does. */
export async function addEdgeImage(images: ImageMap, apiPort: number, token: string, ca: string): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'termlab-sim-edge-sa-'));
  process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(join(dir, 'token'), token, { mode: 0o600 });
  writeFileSync(join(dir, 'ca.crt'), ca, { mode: 0o600 });
  writeFileSync(join(dir, 'namespace'), EDGE_NAMESPACE, { mode: 0o600 });
  images[EDGE_IMAGE_REPOSITORY] = edgeImage(await edgeBundle(), {
    KUBERNETES_SERVICE_HOST: '127.0.0.1',
    KUBERNETES_SERVICE_PORT: String(apiPort),
    TERMLAB_SA_DIR: dir,
  });
}

const KINDS = new Map<string, Resource | 'namespaces'>(
  Object.entries(RESOURCES).map(([resource, info]) => [
    `${info.group ? `${info.group}/` : ''}${info.version}/${info.kind}`,
    resource as Resource,
  ]),
);

function collectionPath(o: KubeObject): string {
  const resource = KINDS.get(`${o.apiVersion}/${o.kind}`);
  if (!resource) throw new Error(`${EDGE_MANIFEST}: the simulated cluster does not serve ${o.apiVersion} ${o.kind}`);
  const { group, namespaced } = RESOURCES[resource];
  const base = group ? `/apis/${group}/v1` : '/api/v1';
  return namespaced ? `${base}/namespaces/${o.metadata.namespace ?? 'default'}/${resource}` : `${base}/${resource}`;
}

function post(
  server: string,
  token: string,
  ca: string,
  path: string,
  body: unknown,
): Promise<{ status: number; body: any }> {
  return new Promise((resolve, reject) => {
    const req = request(
      new URL(path, server),
      { method: 'POST', ca, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' } },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => {
          text += c;
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text ? JSON.parse(text) : null }));
      },
    );
    req.on('error', reject);
    req.end(JSON.stringify(body));
  });
}

/** Creates the manifest's objects through the API, then waits for Traefik's pod to be Ready. */
export async function installEdge(store: Store, server: string, token: string, ca: string): Promise<SimEdge> {
  const docs = parseAllDocuments(readFileSync(packagePath(EDGE_MANIFEST), 'utf8'))
    .map((d) => d.toJS() as KubeObject)
    .filter(Boolean);
  const ready = edgeReady(store);
  for (const o of docs) {
    const path = o.kind === 'Namespace' ? '/api/v1/namespaces' : collectionPath(o);
    let answer = await post(server, token, ca, path, o);
    if (answer.status === 422 && o.kind === 'Service' && /in use on this machine/.test(answer.body?.message ?? '')) {
      // Another sim on this machine holds the manifest's nodePort: take any free one, as the Service says.
      const ports = (o.spec.ports as any[]).map(({ nodePort: _, ...p }) => p);
      answer = await post(server, token, ca, path, { ...o, spec: { ...o.spec, ports } });
    }
    if (answer.status !== 201)
      throw new Error(
        `${EDGE_MANIFEST}: creating ${o.kind} ${o.metadata.name}: HTTP ${answer.status}: ${answer.body?.message ?? ''}`,
      );
  }
  await ready.done;
  const svc = store.mustGet('services', EDGE_NAMESPACE, EDGE_SERVICE);
  const nodePort: number = svc.spec.ports[0].nodePort;
  await reachable(nodePort);
  return { namespace: EDGE_NAMESPACE, nodePort, clusterIP: svc.spec.clusterIP };
}

/**
 * Ready is the kubelet's word; the service proxy routes to the pod only after its next sync (up to its
 * minSyncPeriod, 1 s). Returns once an HTTP request through the NodePort gets any answer.
 */
async function reachable(nodePort: number): Promise<void> {
  const deadline = Date.now() + READY_TIMEOUT_MS;
  for (;;) {
    const answered = await new Promise<boolean>((resolve) => {
      const req = httpRequest({ host: '127.0.0.1', port: nodePort, path: '/ping', agent: false }, (res) => {
        res.resume();
        resolve(true);
      });
      req.on('error', () => resolve(false));
      req.end();
    });
    if (answered) return;
    if (Date.now() > deadline)
      throw new Error(`the edge's NodePort 127.0.0.1:${nodePort} did not answer within ${READY_TIMEOUT_MS / 1000} s`);
    await new Promise((r) => setTimeout(r, PROXY_RETRY_MS));
  }
}

/** Resolves once a traefik pod of the edge's namespace is Ready; rejects after a minute naming what it saw. */
function edgeReady(store: Store): { done: Promise<void> } {
  let last = 'no traefik pod yet';
  const done = new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => {
      stop();
      reject(new Error(`the simulated edge was not Ready within ${READY_TIMEOUT_MS / 1000} s: ${last}`));
    }, READY_TIMEOUT_MS);
    const stop = inform(store, 'pods', (e) => {
      const pod = e.object;
      if (pod.metadata.namespace !== EDGE_NAMESPACE || pod.metadata.labels?.[EDGE_LABEL] !== 'traefik') return;
      const readyCondition = (pod.status?.conditions ?? []).find((c: any) => c.type === 'Ready');
      last = `pod ${pod.metadata.name}: ${pod.status?.phase ?? 'Pending'}, Ready=${readyCondition?.status ?? 'unknown'} ${JSON.stringify(pod.status?.containerStatuses?.[0]?.state ?? {})}`;
      if (readyCondition?.status === 'True' && e.type !== 'DELETED') {
        clearTimeout(timer);
        stop();
        resolve();
      }
    });
  });
  return { done };
}
