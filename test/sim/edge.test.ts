// The simulated cluster's edge (Traefik v3.7.13 in what the lesson depends on), with real processes and sockets:
// it routes through a Gateway to the pod and logs Traefik's JSON access log; Go's replay of an idempotent request
// on a kept-alive connection the app closed, and the 502 "Bad Gateway" of a POST; 503 "no available server" with
// no endpoint; and the throttle's lag after a pod's deletion (it keeps routing to the pod, then stops).
import { request } from 'node:http';
import { PassThrough } from 'node:stream';
import * as k8s from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimCluster, type SimCluster } from '../../cluster/sim/index.ts';
import { defaultImages, labServerBundle } from '../../cluster/sim/runtime.ts';
import { packagePath } from '../../lib/package-root.ts';
import { publishedAtEdge, watchAll } from '../support/sim-apps.ts';

const APP_IMAGE = 'termlab/edge-test-app';
let sim: SimCluster;
let kc: k8s.KubeConfig;
let objects: k8s.KubernetesObjectApi;
let core: k8s.CoreV1Api;
let apps: k8s.AppsV1Api;
let edgePort: number;

interface Answer {
  status: number;
  body: string;
}

/** One request to the edge's NodePort on a connection of its own. */
function send(
  host: string,
  path: string,
  options: { method?: string; body?: string; id?: string; headers?: Record<string, string> } = {},
) {
  return new Promise<Answer>((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port: edgePort,
        path,
        method: options.method ?? 'GET',
        agent: false,
        headers: { host, ...(options.id ? { 'x-termlab-request': options.id } : {}), ...options.headers },
      },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => {
          body += c;
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      },
    );
    req.on('error', reject);
    req.end(options.body);
  });
}

/** Requests one after another until `until` holds: each answer is the event waited on. */
async function sendUntil(host: string, until: (a: Answer) => boolean, what: string, limit = 20_000): Promise<Answer> {
  for (let i = 0; i < limit; i++) {
    const answer = await send(host, '/');
    if (until(answer)) return answer;
  }
  throw new Error(`${host}: never ${what} in ${limit} requests`);
}

const podOf = (a: Answer): string | null => (a.status === 200 ? JSON.parse(a.body).pod : null);

function app(name: string, replicas: number, env: Record<string, string> = {}) {
  const labels = { app: name };
  return [
    {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name, namespace: 'default' },
      spec: {
        replicas,
        selector: { matchLabels: labels },
        template: {
          metadata: { labels },
          spec: {
            terminationGracePeriodSeconds: 30,
            containers: [
              {
                name: 'app',
                image: `${APP_IMAGE}:1`,
                ports: [{ name: 'http', containerPort: 8080 }],
                env: Object.entries(env).map(([n, value]) => ({ name: n, value })),
                readinessProbe: { httpGet: { path: '/', port: 'http' }, periodSeconds: 1, failureThreshold: 1 },
              },
            ],
          },
        },
      },
    },
    ...publishedAtEdge(name, labels),
  ];
}

async function create(items: any[]): Promise<void> {
  for (const o of items) await objects.create(o);
}

describe('the simulated edge', () => {
  beforeAll(async () => {
    const images = defaultImages(await labServerBundle());
    images[APP_IMAGE] = {
      entrypoint: [process.execPath, packagePath('test/support/edge-app.cjs')],
      paths: {},
      env: { PORT: '8080' },
      portEnv: 'PORT',
    };
    sim = await startSimCluster({ edge: true, images });
    edgePort = sim.edge!.nodePort;
    kc = new k8s.KubeConfig();
    kc.loadFromString(sim.kubeconfig);
    objects = k8s.KubernetesObjectApi.makeApiClient(kc);
    core = kc.makeApiClient(k8s.CoreV1Api);
    apps = kc.makeApiClient(k8s.AppsV1Api);
  }, 120_000);
  afterAll(async () => {
    await sim?.stop();
  });

  it('routes through the Gateway to the pod and logs the request as Traefik does (JSON, C2 fields)', async () => {
    await create(app('plain', 1));
    const first = await sendUntil('plain.example', (a) => a.status === 200, 'answered by the pod');
    const pod = JSON.parse(first.body).pod as string;
    const answer = await send('plain.example', '/work?x=1', { id: 'edge-test-1' });
    expect(answer.status).toBe(200);
    expect(JSON.parse(answer.body).pod).toBe(pod);

    // The access log is the traefik container's stdout, read like any pod's log; general lines are skipped.
    const edgePod = (await core.listNamespacedPod({ namespace: 'termlab-edge' })).items[0]!;
    const out = new PassThrough();
    let text = '';
    const line = new Promise<any>((resolve) => {
      out.on('data', (c: Buffer) => {
        text += c;
        // Whole lines only: the last piece may be a line cut by the chunk's end.
        for (const l of text.split('\n').slice(0, -1)) {
          if (!l.startsWith('{')) continue;
          const entry = JSON.parse(l);
          if (entry['request_X-Termlab-Request'] === 'edge-test-1') resolve(entry);
        }
      });
    });
    const follow = await new k8s.Log(kc).log('termlab-edge', edgePod.metadata!.name!, 'traefik', out, {
      follow: true,
    });
    const entry = await line;
    follow.abort();
    // Traefik's own lines: text with ANSI colours, not JSON.
    expect(text.split('\n').some((l) => l.includes('\x1b[32mINF\x1b[0m'))).toBe(true);
    const target = (await core.readNamespacedPod({ namespace: 'default', name: pod })).spec!.containers[0]!.ports![0]!
      .hostPort;
    expect(entry).toMatchObject({
      DownstreamStatus: 200,
      OriginStatus: 200,
      RequestMethod: 'GET',
      RequestPath: '/work?x=1',
      RequestHost: 'plain.example',
      RetryAttempts: 0,
      // The sim's pods share 127.0.0.1: the address dialled is the pod's published port.
      ServiceAddr: `127.0.0.1:${target}`,
      ServiceURL: `http://127.0.0.1:${target}`,
      entryPointName: 'web',
    });
    // As on the node: `%.10x` of the hash is 20 hex digits; the service is the router's, "-svc-", namespace, name, index.
    expect(entry.RouterName).toMatch(
      /^httproute-default-plain-gw-termlab-edge-edge-ep-web-0-[0-9a-f]{20}@kubernetesgateway$/,
    );
    expect(entry.ServiceName).toBe(`${entry.RouterName.replace(/@.*/, '')}-svc-default-plain-0@kubernetesgateway`);
    expect(entry.GzipRatio).toBeUndefined();
    expect(Number.isInteger(entry.Duration) && entry.Duration > 0).toBe(true);
    expect(new Date(entry.StartUTC).toISOString().slice(0, 10)).toBe(new Date().toISOString().slice(0, 10));
    // logrus's JSONFormatter: keys sorted.
    expect(Object.keys(entry)).toEqual([...Object.keys(entry)].sort());
  });

  it('replays a GET whose kept-alive upstream connection the app closed, and answers a POST 502 "Bad Gateway"', async () => {
    await create(app('racy', 1, { RACE: '1' }));
    const first = await sendUntil('racy.example', (a) => a.status === 200, 'answered by the pod');
    // Connections are numbered by the app, the kubelet's probes' included.
    const { conn, req } = JSON.parse(first.body);
    expect(req).toBe(1);
    // The edge reuses that connection; the app closes it under the request; Go's Transport sends it again on a new one.
    const replayed = await send('racy.example', '/');
    expect(replayed.status).toBe(200);
    expect(JSON.parse(replayed.body).req).toBe(1);
    expect(JSON.parse(replayed.body).conn).toBeGreaterThan(conn);
    // The same race under a POST with a body: not replayable, Traefik's 502 with its status text.
    const post = await send('racy.example', '/', { method: 'POST', body: 'x'.repeat(64) });
    expect(post).toEqual({ status: 502, body: 'Bad Gateway' });
    // A POST on a fresh connection is not a race: it reaches the app.
    const fresh = await send('racy.example', '/', { method: 'POST', body: 'y'.repeat(10) });
    expect(fresh.status).toBe(200);
    expect(JSON.parse(fresh.body)).toMatchObject({ method: 'POST', size: 10, req: 1 });
    // An Idempotency-Key does not make a request with a body replayable (no GetBody on a server's request)...
    const keyed = { 'idempotency-key': 'k1' };
    expect(await send('racy.example', '/', { method: 'POST', body: 'z', headers: keyed })).toEqual({
      status: 502,
      body: 'Bad Gateway',
    });
    // ...but a bodiless POST with one is (as node-edge measured on the real Traefik).
    expect((await send('racy.example', '/')).status).toBe(200);
    const bodiless = await send('racy.example', '/', { method: 'POST', headers: keyed });
    expect(bodiless.status).toBe(200);
    expect(JSON.parse(bodiless.body)).toMatchObject({ method: 'POST', req: 1 });
  });

  it('answers 503 "no available server" when the Service has no endpoint', async () => {
    const [, service, route] = app('nobody', 0);
    await create([service, route]);
    const answer = await sendUntil('nobody.example', (a) => a.status !== 404, 'routed');
    expect(answer).toEqual({ status: 503, body: 'no available server\n' });
  });

  it('routes an Ingress of class traefik, and drops the router of a Service with no endpoint (404, not 503)', async () => {
    const [deployment, service] = app('ingapp', 1);
    const [, empty] = app('ingnobody', 0);
    const backend = (name: string) => ({ service: { name, port: { number: 80 } } });
    await create([
      deployment,
      service,
      empty,
      {
        apiVersion: 'networking.k8s.io/v1',
        kind: 'Ingress',
        metadata: { name: 'ing', namespace: 'default' },
        spec: {
          ingressClassName: 'traefik',
          rules: [
            {
              host: 'ing.example',
              http: {
                paths: [
                  { path: '/a', pathType: 'Prefix', backend: backend('ingapp') },
                  { path: '/b', pathType: 'Prefix', backend: backend('ingnobody') },
                ],
              },
            },
          ],
        },
      },
    ]);
    for (let i = 0; ; i++) {
      const a = await send('ing.example', '/a/x');
      if (a.status === 200) break;
      if (i > 20_000) throw new Error(`ing.example/a never routed: ${a.status} ${a.body}`);
    }
    // The configuration that routes /a was built with ingnobody's empty slice: "Skipping service: no endpoints found".
    expect(await send('ing.example', '/b')).toEqual({ status: 404, body: '404 page not found\n' });
  });

  it('keeps its view through dropped watches: it watches again from the last version it saw', async () => {
    await create(app('rewatch', 1));
    const first = podOf(await sendUntil('rewatch.example', (a) => a.status === 200, 'answered by the pod'));
    // Every watch connection the API server holds, the edge's informers' included, cut at once.
    expect(sim.fault({ fault: 'drop-watches' })).toMatch(/^dropped [1-9]\d* watch connection/);
    await apps.patchNamespacedDeployment(
      { namespace: 'default', name: 'rewatch', body: { spec: { replicas: 2 } } },
      k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch),
    );
    const second = await sendUntil(
      'rewatch.example',
      (a) => podOf(a) !== null && podOf(a) !== first,
      'answered by the pod made after the watches were dropped',
    );
    expect(second.status).toBe(200);
  });

  it('answers 502 "Bad Gateway" for a deleted pod whose listener closed while the edge still routes to it (504 once its address is gone)', async () => {
    await create(app('closing', 1, { CLOSE_ON_TERM: '1' }));
    const first = podOf(await sendUntil('closing.example', (a) => a.status === 200, 'answered by the pod'))!;
    // A second pod's arrival opens the throttle's window; the first pod's removal then waits for its end.
    await apps.patchNamespacedDeployment(
      { namespace: 'default', name: 'closing', body: { spec: { replicas: 2 } } },
      k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch),
    );
    await sendUntil('closing.example', (a) => podOf(a) !== null && podOf(a) !== first, 'answered by the second pod');
    await core.deleteNamespacedPod({ namespace: 'default', name: first });
    // Until the edge sends nothing to the first pod: 200 answers in a row from the second.
    const refused: Answer[] = [];
    let fromSecond = 0;
    for (let i = 0; i < 50_000 && fromSecond < 200; i++) {
      const a = await send('closing.example', '/');
      if (a.status === 200 && podOf(a) !== first) fromSecond++;
      else {
        fromSecond = 0;
        if (a.status !== 200) refused.push(a);
      }
    }
    expect(fromSecond).toBe(200);
    // Go's dial error ("connection refused") through ComputeStatusCode: 502 and the status text; once the pod's
    // sandbox is gone its address is too, and a dial there waits out dialTimeout: 504 (as on the node).
    expect(refused.length).toBeGreaterThan(0);
    for (const a of refused)
      expect([
        { status: 502, body: 'Bad Gateway' },
        { status: 504, body: 'Gateway Timeout' },
      ]).toContainEqual(a);
  });

  it("keeps routing to a deleted pod for the throttle's lag, then stops", async () => {
    await create(app('web', 2));
    const seen = new Set<string>();
    await sendUntil(
      'web.example',
      (a) => {
        const pod = podOf(a);
        if (pod) seen.add(pod);
        return seen.size === 2;
      },
      'answered by both pods',
    );
    const victim = [...seen][0]!;
    // Watching before the window opens, so that once it is open only the delete call stands before the removal.
    const slices = await watchAll(kc, '/apis/discovery.k8s.io/v1/namespaces/default/endpointslices', {
      labelSelector: 'kubernetes.io/service-name=web',
    });
    let removed = false;
    slices
      .waitFor(
        (e) =>
          (e.object as any).endpoints?.some(
            (ep: any) => ep.targetRef?.name === victim && ep.conditions?.ready === false,
          ),
        `${victim} not ready in its EndpointSlice`,
        120_000,
      )
      .then(
        () => {
          removed = true;
        },
        () => {},
      );
    // A third pod: its endpoint's arrival is a configuration the edge applies, and the throttle's window opens then.
    await apps.patchNamespacedDeployment(
      { namespace: 'default', name: 'web', body: { spec: { replicas: 3 } } },
      k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch),
    );
    const third = podOf(
      await sendUntil('web.example', (a) => podOf(a) !== null && !seen.has(podOf(a)!), 'answered by the third pod'),
    );
    await core.deleteNamespacedPod({ namespace: 'default', name: victim });
    let afterRemoval = 0;
    let sinceLast = 0;
    // Until 200 answers in a row come from the other pods: the edge has applied the removal.
    for (let i = 0; i < 50_000 && sinceLast < 200; i++) {
      const sentAfter = removed;
      const pod = podOf(await send('web.example', '/'));
      if (pod === victim) {
        sinceLast = 0;
        if (sentAfter) afterRemoval++;
      } else sinceLast++;
    }
    slices.stop();
    expect(third).not.toBeNull();
    expect(removed).toBe(true);
    expect(sinceLast).toBe(200);
    // Sent after the EndpointSlice said the pod was not ready, and still routed to it: the edge's view was behind,
    // held by the throttle's window (without it, the edge's watch would drop the pod within a request or two).
    expect(afterRemoval).toBeGreaterThanOrEqual(10);
  });
});
