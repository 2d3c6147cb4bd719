// A plain-HTTP stand-in in front of a Kubernetes API server (the simulated one, or the real node's):
// every request is passed on with the client's own credentials (its bearer token), each is logged
// as its method, path and query with the answer's status, and a request `refuse` picks is answered
// 403 as RBAC would. Tests and node checks use it to see which calls a command makes, and to take
// one right away from an otherwise able user.
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { AddressInfo } from 'node:net';

export interface ProxiedRequest {
  method: string;
  path: string;
  query: URLSearchParams;
  status: number;
}

export interface ApiProxy {
  server: string;
  requests: ProxiedRequest[];
  /** A kubeconfig for this proxy with the given bearer token (namespace as its context's). */
  kubeconfig(token: string, namespace?: string): string;
  stop(): Promise<void>;
}

export async function startApiProxy(
  upstream: string,
  options: {
    refuse?: (req: IncomingMessage, url: URL) => string | null;
    /** A request body to change on its way, as an API server's own defaulting or dropping would (null: as sent). */
    rewrite?: (req: IncomingMessage, url: URL, body: Buffer) => Buffer | null;
  } = {},
): Promise<ApiProxy> {
  const requests: ProxiedRequest[] = [];
  const target = new URL(upstream);
  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://proxy.invalid');
    const entry: ProxiedRequest = {
      method: req.method ?? 'GET',
      path: url.pathname,
      query: url.searchParams,
      status: 0,
    };
    requests.push(entry);
    const refusal = options.refuse?.(req, url);
    if (refusal) {
      entry.status = 403;
      res.writeHead(403, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          kind: 'Status',
          apiVersion: 'v1',
          metadata: {},
          status: 'Failure',
          reason: 'Forbidden',
          code: 403,
          message: refusal,
        }),
      );
      req.resume();
      return;
    }
    const forward = (body: Buffer | null) => {
      const out = httpsRequest(
        {
          host: target.hostname,
          port: target.port || 443,
          method: req.method,
          path: req.url,
          headers: headersFor(req, target.host, body),
          rejectUnauthorized: false,
        },
        (answer) => {
          entry.status = answer.statusCode ?? 0;
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
          res.on('close', () => answer.destroy());
        },
      );
      out.on('error', () => res.destroy());
      if (body) out.end(body);
      else req.pipe(out);
    };
    if (!options.rewrite) return forward(null);
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      forward(options.rewrite!(req, url, body) ?? body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    server: address,
    requests,
    kubeconfig: (token, namespace) =>
      `apiVersion: v1\nkind: Config\nclusters: [{name: proxy, cluster: {server: "${address}", insecure-skip-tls-verify: true}}]\nusers: [{name: u, user: {token: "${token}"}}]\ncontexts: [{name: proxied, context: {cluster: proxy, user: u${namespace ? `, namespace: ${namespace}` : ''}}}]\ncurrent-context: proxied\n`,
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The client's headers for the upstream; a rewritten body's own length in place of its framing. */
function headersFor(req: IncomingMessage, host: string, body: Buffer | null): Record<string, string | string[]> {
  const headers: Record<string, string | string[]> = {};
  for (const [k, v] of Object.entries(req.headers)) if (v !== undefined) headers[k] = v;
  headers.host = host;
  if (body) {
    delete headers['transfer-encoding'];
    headers['content-length'] = String(body.length);
  }
  return headers;
}

/** A logged request as the RBAC verb and resource it needs (`list pods`, `get pods/log`, `create deployments.apps`). */
export function rbacOf(r: ProxiedRequest): string | null {
  const m = /^\/(?:api\/v1|apis\/([^/]+)\/v1)(?:\/namespaces\/[^/]+)?\/([a-z]+)(?:\/([^/]+)(?:\/([a-z]+))?)?$/.exec(
    r.path,
  );
  if (!m) return null;
  const [, group, resource, name, sub] = m;
  const what = `${resource}${sub ? `/${sub}` : ''}${group ? `.${group}` : ''}`;
  const watch = r.query.get('watch') === 'true' || r.query.get('watch') === '1';
  const verb =
    r.method === 'GET'
      ? watch
        ? 'watch'
        : name
          ? 'get'
          : 'list'
      : r.method === 'POST'
        ? 'create'
        : r.method === 'PATCH'
          ? 'patch'
          : r.method === 'PUT'
            ? 'update'
            : r.method === 'DELETE'
              ? name
                ? 'delete'
                : 'deletecollection'
              : r.method.toLowerCase();
  return `${verb} ${what}`;
}
