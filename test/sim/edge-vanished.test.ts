// The simulated Traefik's dial to a pod whose address is gone. On the node a deleted pod's IP vanishes with its
// sandbox, and a dial there gets no answer: Traefik waits out its dialTimeout and answers 504 (node-edge measured
// it; the load's own limit, shorter, ends the request first). The sim's pods share 127.0.0.1, where the closed
// port refuses at once (502): so the edge is told which servers are gone and does not dial them.
import { once } from 'node:events';
import { createServer, request, type Server as HttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { parseEdgeArgs } from '../../cluster/sim/edge/flags.ts';
import { DIAL_TIMEOUT_MS, handle, type Routing } from '../../cluster/sim/edge/forward.ts';
import type { Route, Server } from '../../cluster/sim/edge/routes.ts';

const servers: HttpServer[] = [];
afterEach(() => {
  for (const s of servers.splice(0)) s.close();
});

async function listen(s: HttpServer): Promise<number> {
  servers.push(s);
  s.listen(0, '127.0.0.1');
  await once(s, 'listening');
  return (s.address() as AddressInfo).port;
}

function routeTo(server: Server): Route {
  return {
    provider: 'kubernetesgateway',
    routerName: 'httproute-demo-web-gw-termlab-edge-edge-ep-web-0-0123456789abcdef0123@kubernetesgateway',
    entryPoint: 'web',
    hosts: ['web.demo.test'],
    pathType: 'PathPrefix',
    path: '/',
    backends: [{ name: 'svc-demo-web-0@kubernetesgateway', weight: 1, servers: [server], next: 0 }],
    backendNext: 0,
  };
}

function get(port: number): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path: '/work', headers: { host: 'web.demo.test' } }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => {
        body += c;
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

/** The pod's app (counting connections) and the edge in front of it, the pod's address gone or not. */
async function edgeBefore(gone: boolean) {
  const app = createServer((_req, res) => res.end('ok'));
  let connections = 0;
  app.on('connection', () => connections++);
  const appPort = await listen(app);
  const server: Server = {
    podUid: 'uid-1',
    host: '127.0.0.1',
    port: appPort,
    addr: `127.0.0.1:${appPort}`,
    url: `http://127.0.0.1:${appPort}`,
  };
  const routing: Routing = { routes: [routeTo(server)], keptHeaders: [], dialTimeoutMs: 50, vanished: () => gone };
  const edgePort = await listen(createServer((req, res) => handle(routing, req, res)));
  return { edgePort, connections: () => connections };
}

describe("the simulated Traefik's dial to a vanished pod", () => {
  it('answers 504 "Gateway Timeout" at its dial timeout and never reaches the address', async () => {
    const { edgePort, connections } = await edgeBefore(true);
    expect(await get(edgePort)).toEqual({ status: 504, body: 'Gateway Timeout' });
    expect(connections()).toBe(0);
  });

  it('forwards as before to a pod whose address is still there', async () => {
    const { edgePort, connections } = await edgeBefore(false);
    expect(await get(edgePort)).toEqual({ status: 200, body: 'ok' });
    expect(connections()).toBe(1);
  });

  it("reads Traefik's dialTimeout flag, 30 s when not given", () => {
    const base = ['--entryPoints.web.address=:8000'];
    expect(parseEdgeArgs(base).dialTimeoutMs).toBe(DIAL_TIMEOUT_MS);
    expect(parseEdgeArgs([...base, '--serversTransport.forwardingTimeouts.dialTimeout=5s']).dialTimeoutMs).toBe(5000);
  });
});
