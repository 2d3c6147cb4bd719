// A streaming GET on the API (watches, logs) with the kubeconfig's TLS and credentials. Written
// on node:http so that a broken stream is seen as an error and an unanswered request times out.
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { Cluster } from './connect.ts';
import { HttpStatusError, RequestTimeoutError } from './failures.ts';

export interface OpenStream {
  response: IncomingMessage;
  close(): void;
}

/** Resolves with the response once the API answered 200; a non-200 answer is an HttpStatusError. */
export async function openStream(
  cluster: Cluster,
  path: string,
  query: Record<string, string | number | boolean | undefined>,
): Promise<OpenStream> {
  const url = new URL(cluster.server.replace(/\/+$/, '') + path);
  for (const [key, value] of Object.entries(query)) if (value !== undefined) url.searchParams.set(key, String(value));
  const init = await cluster.kc.applyToFetchOptions({});
  // applyToFetchOptions builds a WHATWG Headers object (the bearer token, for example).
  const headers = Object.fromEntries((init.headers as Headers | undefined)?.entries() ?? []);
  const send = url.protocol === 'http:' ? httpRequest : httpsRequest;
  const timeoutMs = cluster.health.requestTimeoutMs;
  return new Promise((resolve, reject) => {
    const req = send(url, { method: 'GET', agent: init.agent as never, headers });
    // Until the answer starts: a stalled API is a timeout. After it, the stream may be quiet for long.
    const timer = setTimeout(() => req.destroy(new RequestTimeoutError(`GET ${url.pathname}`, timeoutMs)), timeoutMs);
    req.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    req.on('response', (response) => {
      clearTimeout(timer);
      if (response.statusCode === 200) {
        // A cut stream errors the response; the caller's own listener reads it, this one keeps it from crashing.
        response.on('error', () => {});
        resolve({
          response,
          close: () => {
            req.destroy();
            response.destroy();
          },
        });
        return;
      }
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => {
        if (body.length < 4096) body += chunk;
      });
      response.on('error', () => {});
      response.on('end', () => {
        const retryAfter = Number(response.headers['retry-after']);
        reject(new HttpStatusError(response.statusCode ?? 0, body, Number.isFinite(retryAfter) ? retryAfter : null));
      });
    });
    req.end();
  });
}

/** Reads a whole answer as text (a log without follow). */
export async function getText(
  cluster: Cluster,
  path: string,
  query: Record<string, string | number | boolean | undefined>,
): Promise<string> {
  const { response } = await openStream(cluster, path, query);
  const timeoutMs = cluster.health.requestTimeoutMs;
  return new Promise((resolve, reject) => {
    let text = '';
    const timer = setTimeout(() => response.destroy(new RequestTimeoutError(`GET ${path}`, timeoutMs)), timeoutMs);
    response.setEncoding('utf8');
    response.on('data', (chunk: string) => {
      text += chunk;
    });
    response.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    response.on('end', () => {
      clearTimeout(timer);
      resolve(text);
    });
  });
}
