// The least Kubernetes client the witness needs: JSON requests and a line-by-line watch over node's own
// https, with the pod's ServiceAccount token and CA. No npm dependencies: it runs in the lab image.
import { readFileSync } from 'node:fs';
import { Agent, request } from 'node:https';

export interface ApiAccess {
  /** https://host:port of the API server. */
  server: string;
  /** Read before each request: a projected token is rotated by the kubelet. */
  tokenFile: string;
  caFile: string;
}

export interface ApiAnswer {
  status: number;
  body: any;
}

export class ApiCallError extends Error {
  readonly code = 'WITNESS_API';
  readonly status: number | null;
  constructor(message: string, status: number | null) {
    super(message);
    this.status = status;
  }
}

export function createApi(access: ApiAccess) {
  const agent = new Agent({ ca: readFileSync(access.caFile), keepAlive: true });
  const base = new URL(access.server);
  const headers = (json: boolean) => ({
    authorization: `Bearer ${readFileSync(access.tokenFile, 'utf8').trim()}`,
    accept: 'application/json',
    ...(json ? { 'content-type': 'application/json' } : {}),
  });

  /** One request; a non-JSON or unreachable answer is an ApiCallError naming the path. */
  function call(method: string, path: string, body?: unknown, timeoutMs = 30_000): Promise<ApiAnswer> {
    return new Promise((resolve, reject) => {
      const req = request(
        new URL(path, base),
        { method, agent, headers: headers(body !== undefined), timeout: timeoutMs },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('error', (e) => reject(new ApiCallError(`${method} ${path}: ${e.message}`, null)));
          res.on('end', () => {
            const text = Buffer.concat(chunks).toString('utf8');
            try {
              resolve({ status: res.statusCode ?? 0, body: text ? JSON.parse(text) : null });
            } catch {
              reject(
                new ApiCallError(`${method} ${path}: HTTP ${res.statusCode}, not JSON: ${text.slice(0, 200)}`, null),
              );
            }
          });
        },
      );
      req.on('timeout', () => req.destroy(new Error(`no answer within ${timeoutMs} ms`)));
      req.on('error', (e) => reject(new ApiCallError(`${method} ${path}: ${e.message}`, null)));
      if (body !== undefined) req.write(JSON.stringify(body));
      req.end();
    });
  }

  /**
   * A watch: each JSON line to onEvent until the server ends it (resolves) or the connection fails (rejects).
   * A refusal (not 200) rejects with its status.
   */
  function watch(
    path: string,
    onEvent: (event: { type: string; object: any }) => void,
  ): {
    ended: Promise<void>;
    abort(): void;
  } {
    let abort = () => {};
    const ended = new Promise<void>((resolve, reject) => {
      const req = request(new URL(path, base), { method: 'GET', agent, headers: headers(false) }, (res) => {
        if (res.statusCode !== 200) {
          res.resume();
          reject(new ApiCallError(`GET ${path}: HTTP ${res.statusCode}`, res.statusCode ?? null));
          return;
        }
        let buffered = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          buffered += chunk;
          let at = buffered.indexOf('\n');
          while (at !== -1) {
            const line = buffered.slice(0, at).trim();
            buffered = buffered.slice(at + 1);
            if (line) onEvent(JSON.parse(line));
            at = buffered.indexOf('\n');
          }
        });
        res.on('end', () => resolve());
        // Aborted or cut mid-stream: the caller watches again from the last version it saw.
        res.on('close', () => resolve());
        res.on('error', (e) => reject(new ApiCallError(`watch ${path}: ${e.message}`, null)));
      });
      req.on('error', (e) => reject(new ApiCallError(`watch ${path}: ${e.message}`, null)));
      req.end();
      abort = () => req.destroy();
    });
    return { ended, abort: () => abort() };
  }

  return { call, watch, close: () => agent.destroy() };
}

export type Api = ReturnType<typeof createApi>;
