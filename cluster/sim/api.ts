// The API server: the subset of the real Kubernetes API the lab needs, in its wire format.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer } from 'node:https';
import type { Duplex } from 'node:stream';
import {
  API_GROUPS,
  apiVersions,
  CORE_V1_RESOURCES,
  GROUP_RESOURCES,
  openApiV3,
  OPENAPI_V3_ROOT,
} from './discovery.ts';
import { formatIssue } from '../../lib/files.ts';
import { FaultRequestSchema } from './faults.ts';
import { serveLog } from './logs.ts';
import { dryRunOf, routeObjects } from './objects-api.ts';
import { apiVersionOf, listKindOf } from './resources.ts';
import { parseFieldSelector, parseLabelSelector } from './selectors.ts';
import type { SimParts } from './parts.ts';
import { parseExecOptions } from './remotecommand.ts';
import { ApiError, badRequest, notFound, refuseUpgrade, sendError, sendJson, statusObject } from './status.ts';
import type { KubeObject, Resource } from './store.ts';
import { apiTime } from './time.ts';
import { toTable } from './table.ts';
import { selfSubjectReview } from './whoami.ts';
import type { ServingCertificate } from './tls.ts';

const MAX_BODY = 3 * 1024 * 1024;

async function readBody(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY) throw new ApiError(413, 'RequestEntityTooLarge', 'the request body is too large');
    chunks.push(chunk as Buffer);
  }
  const contentType = req.headers['content-type'] ?? '';
  // kubectl's typed commands (`kubectl create deployment`) send protobuf. Loaded on the first such
  // body: protobufjs and the message types cost every sim start 0.1 s otherwise.
  if (/protobuf|cbor/.test(contentType))
    return (await import('./protobuf-body.ts')).refuseOrDecode(contentType, Buffer.concat(chunks));
  const text = Buffer.concat(chunks).toString('utf8');
  if (!text.trim()) return undefined;
  try {
    return JSON.parse(text);
  } catch (error) {
    throw badRequest(`the body is not JSON: ${(error as Error).message}`);
  }
}

const wantsTable = (req: IncomingMessage) => /as=Table/.test(req.headers.accept ?? '');
const intParam = (url: URL, name: string) => {
  const raw = url.searchParams.get(name);
  if (raw === null || raw === '') return null;
  if (!/^-?\d+$/.test(raw)) throw badRequest(`${name}: expected an integer, got ${JSON.stringify(raw)}`);
  return Number(raw);
};

export function createApiServer(parts: SimParts, tls: ServingCertificate) {
  const { store, registry, kubelet, watches, truth, portForward, remoteCommand } = parts;

  /** The create was applied; its answer is held until the pod is Ready (or gone, or 2 min), then the connection is cut. */
  function loseAnswerOnceReady(res: ServerResponse, namespace: string, name: string): void {
    const started = performance.now();
    const look = setInterval(() => {
      const pod = store.get('pods', namespace, name) as
        | { status?: { conditions?: { type: string; status: string }[] } }
        | undefined;
      const ready = pod?.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True');
      if (!ready && pod && performance.now() - started < 120_000) return;
      clearInterval(look);
      res.socket?.destroy();
    }, 50);
    res.on('close', () => clearInterval(look));
  }

  function listOrWatch(
    req: IncomingMessage,
    res: ServerResponse,
    url: URL,
    resource: Resource,
    namespace: string | null,
  ): void {
    const labels = parseLabelSelector(url.searchParams.get('labelSelector'));
    const fields = parseFieldSelector(url.searchParams.get('fieldSelector'));
    const matches = (o: KubeObject) => labels(o.metadata.labels) && fields(o);
    if (url.searchParams.get('watch') === 'true' || url.searchParams.get('watch') === '1') {
      return watches.serve(req, res, {
        resource,
        namespace,
        matches,
        resourceVersion: url.searchParams.get('resourceVersion'),
        timeoutSeconds: intParam(url, 'timeoutSeconds'),
        allowBookmarks: url.searchParams.get('allowWatchBookmarks') === 'true',
        asTable: wantsTable(req)
          ? (o, first) => {
              const table = toTable(resource, [o], store.currentVersion);
              return first ? table : { ...table, columnDefinitions: [] };
            }
          : null,
      });
    }
    const items = store.list(resource, namespace, matches);
    if (wantsTable(req)) return sendJson(res, 200, toTable(resource, items, store.currentVersion));
    sendJson(res, 200, {
      kind: listKindOf(resource),
      apiVersion: apiVersionOf(resource),
      metadata: { resourceVersion: store.currentVersion },
      items,
    });
  }

  function one(req: IncomingMessage, res: ServerResponse, resource: Resource, object: KubeObject): void {
    if (wantsTable(req)) return sendJson(res, 200, toTable(resource, [object], store.currentVersion));
    sendJson(res, 200, object);
  }

  async function route(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://sim.invalid');
    const path = url.pathname.replace(/\/+$/, '') || '/';
    const method = req.method ?? 'GET';
    let m: RegExpExecArray | null;

    if (method === 'GET') {
      if (path === '/version') return sendJson(res, 200, parts.version);
      if (path === '/api') return sendJson(res, 200, apiVersions(req.headers.host ?? '127.0.0.1'));
      if (path === '/api/v1') return sendJson(res, 200, CORE_V1_RESOURCES);
      if (path === '/apis') return sendJson(res, 200, API_GROUPS);
      if (path === '/openapi/v3') return sendJson(res, 200, OPENAPI_V3_ROOT);
      if ((m = /^\/openapi\/v3\/(api\/v1|apis\/[a-z0-9.-]+\/v1)$/.exec(path)))
        return sendJson(res, 200, openApiV3(m[1]!, parts.version.gitVersion));
      if ((m = /^\/apis\/([a-z0-9.-]+)\/v1$/.exec(path)) && GROUP_RESOURCES[m[1]!])
        return sendJson(res, 200, GROUP_RESOURCES[m[1]!]);
      if (path === '/termlab-sim/proxy') return sendJson(res, 200, await parts.proxy.allTruth());
      if ((m = /^\/termlab-sim\/proxy\/([^/]+)\/([^/]+)$/.exec(path)))
        return sendJson(
          res,
          200,
          (await parts.proxy.truth(m[1]!, m[2]!)) ?? statusObject(404, 'NotFound', 'no such service in the proxy'),
        );
      if (path === '/healthz' || path === '/readyz' || path === '/livez') {
        res.writeHead(200, { 'content-type': 'text/plain' });
        res.end('ok');
        return;
      }
      if (path === '/termlab-sim/truth') return sendJson(res, 200, truth.all());
      if ((m = /^\/termlab-sim\/truth\/([^/]+)$/.exec(path)))
        return sendJson(res, 200, truth.get(m[1]!) ?? statusObject(404, 'NotFound', 'no record'));
    }
    if (method === 'POST' && path === '/termlab-sim/faults') {
      const parsed = FaultRequestSchema.safeParse(await readBody(req));
      if (!parsed.success) throw badRequest(`fault: ${formatIssue(parsed.error.issues[0]!, '(body)')}`);
      return sendJson(res, 200, { applied: parts.applyFault(parsed.data, req.socket) });
    }

    if (method === 'POST' && path === '/apis/authentication.k8s.io/v1/selfsubjectreviews') {
      await readBody(req);
      return sendJson(res, 201, selfSubjectReview());
    }
    if (path === '/api/v1/namespaces') {
      if (method === 'GET') return listOrWatch(req, res, url, 'namespaces', null);
      if (method === 'POST') {
        const dryRun = dryRunOf(url, 'Create');
        const body = (await readBody(req)) as any;
        const name = body?.metadata?.name;
        if (!name || !/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/.test(name))
          throw new ApiError(422, 'Invalid', 'metadata.name: a lowercase RFC 1123 label is required');
        const created = store.create(
          'namespaces',
          {
            apiVersion: 'v1',
            kind: 'Namespace',
            metadata: {
              name,
              labels: { ...body.metadata.labels, 'kubernetes.io/metadata.name': name },
              uid: crypto.randomUUID(),
              resourceVersion: '',
              creationTimestamp: apiTime(),
            },
            spec: { finalizers: ['kubernetes'] },
            status: { phase: 'Active' },
          },
          dryRun,
        );
        return sendJson(res, 201, created);
      }
    }
    if ((m = /^\/api\/v1\/namespaces\/([^/]+)$/.exec(path)) && method === 'GET')
      return one(req, res, 'namespaces', store.mustGet('namespaces', undefined, m[1]!));
    if (path === '/api/v1/nodes' && method === 'GET') return listOrWatch(req, res, url, 'nodes', null);
    if ((m = /^\/api\/v1\/nodes\/([^/]+)$/.exec(path)) && method === 'GET')
      return one(req, res, 'nodes', store.mustGet('nodes', undefined, m[1]!));

    if ((m = /^\/api\/v1(?:\/namespaces\/([^/]+))?\/(pods|events)$/.exec(path))) {
      const namespace = m[1] ?? null;
      const resource = m[2] as Resource;
      if (method === 'GET') return listOrWatch(req, res, url, resource, namespace);
      if (method === 'POST' && resource === 'pods' && namespace) {
        const dryRun = dryRunOf(url, 'Create');
        const created = registry.create(namespace, await readBody(req), dryRun);
        if (!dryRun && registry.takeLostCreateAnswer(namespace))
          return loseAnswerOnceReady(res, namespace, created.metadata.name);
        return sendJson(res, 201, created);
      }
    }
    if ((m = /^\/api\/v1\/namespaces\/([^/]+)\/events\/([^/]+)$/.exec(path)) && method === 'GET')
      return one(req, res, 'events', store.mustGet('events', m[1]!, m[2]!));

    if ((m = /^\/api\/v1\/namespaces\/([^/]+)\/pods\/([^/]+)(?:\/(status|log))?$/.exec(path))) {
      const [, namespace, name, sub] = m as unknown as [string, string, string, string | undefined];
      if (sub === 'log' && method === 'GET') return podLog(res, url, namespace, name);
      if (sub === 'status' && method === 'GET') return one(req, res, 'pods', store.mustGet('pods', namespace, name));
      if (!sub && method === 'GET') return one(req, res, 'pods', store.mustGet('pods', namespace, name));
      if (!sub && method === 'DELETE') {
        const body = ((await readBody(req)) ?? {}) as any;
        const grace = intParam(url, 'gracePeriodSeconds') ?? body.gracePeriodSeconds;
        return sendJson(
          res,
          200,
          registry.delete(namespace, name, {
            gracePeriodSeconds: grace ?? undefined,
            preconditions: body.preconditions,
            dryRun: dryRunOf(url, 'Delete', body),
          }),
        );
      }
      if (!sub && method === 'PATCH') {
        const dryRun = dryRunOf(url, 'Patch');
        return sendJson(
          res,
          200,
          registry.patch(namespace, name, req.headers['content-type'] ?? '', await readBody(req), dryRun),
        );
      }
    }
    if (await routeObjects({ store, objects: parts.objects, readBody, listOrWatch, one }, req, res, url, path, method))
      return;
    throw new ApiError(404, 'NotFound', `the server could not find the requested resource (${method} ${path})`);
  }

  function podLog(res: ServerResponse, url: URL, namespace: string, name: string): void {
    const pod = store.get('pods', namespace, name);
    if (!pod) throw notFound('pods', name);
    const containerName = url.searchParams.get('container') ?? defaultLogContainer(pod);
    if (!podContainerNames(pod).includes(containerName)) {
      throw badRequest(`container ${containerName} is not valid for pod ${name}`);
    }
    const container = kubelet.containerLog(pod.metadata.uid, containerName);
    if (!container) {
      throw badRequest(`container "${containerName}" in pod "${name}" is waiting to start: ContainerCreating`);
    }
    serveLog(
      res,
      container,
      {
        follow: url.searchParams.get('follow') === 'true',
        timestamps: url.searchParams.get('timestamps') === 'true',
        sinceTime: url.searchParams.get('sinceTime'),
        tailLines: intParam(url, 'tailLines'),
        checkPeriodMs: kubelet.logReaderCheckMs,
      },
      kubelet.pause,
    );
  }

  const server = createServer({ key: tls.key, cert: tls.cert }, (req, res) => {
    if (parts.refuseUnauthorized(req, res)) return;
    route(req, res).catch((error: unknown) => {
      if (res.headersSent) {
        res.destroy();
        return;
      }
      if (error instanceof ApiError) return sendError(res, error);
      sendError(res, new ApiError(500, 'InternalError', `Internal error occurred: ${(error as Error).message}`));
    });
  });

  server.on('upgrade', (req, socket, head) => {
    if (parts.refuseUnauthorized(req, socket)) return;
    try {
      upgrade(req, socket, head);
    } catch (error) {
      refuseUpgrade(
        socket,
        error instanceof ApiError
          ? error
          : new ApiError(500, 'InternalError', `Internal error occurred: ${(error as Error).message}`),
      );
    }
  });

  /** pods/exec and pods/portforward: the streaming subresources, over WebSocket. */
  function upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    const url = new URL(req.url ?? '/', 'http://sim.invalid');
    const m = /^\/api\/v1\/namespaces\/([^/]+)\/pods\/([^/]+)\/(exec|portforward)$/.exec(url.pathname);
    if (!m)
      throw new ApiError(404, 'NotFound', `the server could not find the requested resource (upgrade ${url.pathname})`);
    const [, namespace, name, subresource] = m as unknown as [string, string, string, string];
    if (req.headers.upgrade?.toLowerCase() !== 'websocket') {
      throw badRequest(
        `the simulated cluster serves ${subresource} over WebSocket only, not ${req.headers.upgrade ?? 'a plain request'}: use kubectl 1.31 or later`,
      );
    }
    const pod = store.get('pods', namespace, name);
    if (!pod) throw notFound('pods', name);
    if (subresource === 'exec') {
      const options = parseExecOptions(url);
      const containerName = options.container ?? pod.spec.containers[0].name;
      if (!podContainerNames(pod).includes(containerName))
        throw badRequest(`container ${containerName} is not valid for pod ${name}`);
      const container = kubelet.runningContainer(pod.metadata.uid, containerName);
      if (!container) throw badRequest(`container not found ("${containerName}")`);
      return remoteCommand.handleUpgrade(req, socket, head, container, options);
    }
    if (kubelet.isDone(pod.metadata.uid)) throw badRequest(`pod ${name} is not running`);
    portForward.handleUpgrade(req, socket, head, url, {
      name,
      uid: pod.metadata.uid,
      target: (port) => kubelet.portTarget(pod.metadata.uid, port),
      opened: (upstream) => kubelet.proxied(upstream),
    });
  }

  return server;
}

/** podutil.VisitContainers' order: init containers, then the main ones. */
function podContainerNames(pod: KubeObject): string[] {
  return [...(pod.spec.initContainers ?? []), ...pod.spec.containers].map((c: { name: string }) => c.name);
}

/** strategy.go validateContainer: with no container named, the one main container, else a 400 that lists them. */
function defaultLogContainer(pod: KubeObject): string {
  const main = pod.spec.containers as { name: string }[];
  if (main.length === 1) return main[0]!.name;
  throw badRequest(
    `a container name must be specified for pod ${pod.metadata.name}, choose one of: [${podContainerNames(pod).join(' ')}]`,
  );
}
