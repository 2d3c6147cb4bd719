// Only the owner gets in: each start of the simulated cluster makes a random bearer token, hands
// it out only inside its kubeconfig, and refuses every request that does not carry it, before any
// handler runs. Other local users on a shared machine can reach 127.0.0.1 but cannot read that file.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';

const TOKEN_BYTES = 32;
const HTTP_UNAUTHORIZED = 401;

export function newToken(): string {
  return randomBytes(TOKEN_BYTES).toString('base64url');
}

// Digests have one length whatever was sent, so the comparison takes the same time for every guess.
const digest = (text: string) => createHash('sha256').update(text).digest();

/** The API server's answer to a request without valid credentials. */
export const UNAUTHORIZED_STATUS = {
  kind: 'Status',
  apiVersion: 'v1',
  metadata: {},
  status: 'Failure',
  message: 'Unauthorized',
  reason: 'Unauthorized',
  code: HTTP_UNAUTHORIZED,
};

/**
 * Returns the one check that the request handler and the upgrade handler call first: true when
 * it has refused the request (a 401 Status is written and the connection ends), false to go on.
 */
export function createTokenGate(token: string) {
  const expected = digest(`Bearer ${token}`);
  return function refuseUnauthorized(req: IncomingMessage, reply: ServerResponse | Duplex): boolean {
    const presented = req.headers.authorization;
    if (presented !== undefined && timingSafeEqual(digest(presented), expected)) return false;
    const body = JSON.stringify(UNAUTHORIZED_STATUS);
    const headers = {
      'content-type': 'application/json',
      'content-length': String(Buffer.byteLength(body)),
      connection: 'close',
    };
    if ('writeHead' in reply) {
      reply.writeHead(HTTP_UNAUTHORIZED, headers);
      reply.end(body);
    } else {
      const head = Object.entries(headers)
        .map(([name, value]) => `${name}: ${value}\r\n`)
        .join('');
      reply.end(`HTTP/1.1 ${HTTP_UNAUTHORIZED} Unauthorized\r\n${head}\r\n${body}`);
    }
    return true;
  };
}
