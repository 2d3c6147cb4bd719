// A port-forward or exec stream that fails to open reaches the harness as ws's ErrorEvent, not an Error:
// it was classed final and shown as "[object Object]" (seen in test/sim/port-reuse.test.ts under load),
// so a connection reset while opening a port-forward was never tried again.
import { createServer, type Server } from 'node:http';
import { PassThrough } from 'node:stream';
import * as k8s from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { standInKubeConfig } from '../support/stand-in-api.ts';
import { classify } from '../../harness/kube/failures.ts';

let server: Server;
let kc: k8s.KubeConfig;

beforeAll(async () => {
  // Each path refuses the upgrade its own way, as a restarting or strict API server does.
  server = createServer((_req, res) => {
    res.writeHead(404).end();
  });
  server.on('upgrade', (req, socket) => {
    const namespace = /\/namespaces\/([^/]+)\//.exec(req.url ?? '')?.[1];
    if (namespace === 'reset') {
      socket.destroy();
      return;
    }
    const status = namespace === 'busy' ? 503 : 403;
    socket.end(`HTTP/1.1 ${status} X\r\nContent-Length: 0\r\nConnection: close\r\n\r\n`);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  kc = standInKubeConfig(server);
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

/** The harness's own call (kube/portforward.ts): client-node's PortForward, whose open fails. */
async function openFailure(namespace: string): Promise<unknown> {
  try {
    await new k8s.PortForward(kc, true).portForward(
      namespace,
      'pod',
      [8080],
      new PassThrough(),
      new PassThrough(),
      new PassThrough(),
    );
  } catch (error) {
    return error;
  }
  throw new Error(`the port-forward in ${namespace} opened`);
}

describe('a stream that fails to open', () => {
  it("is transient when the connection is reset during the upgrade, with the socket's words", async () => {
    const error = await openFailure('reset');
    expect(error).not.toBeInstanceOf(Error);
    const failure = classify(error);
    expect(failure.transient).toBe(true);
    expect(failure.text).not.toContain('[object');
    expect(failure.text).toMatch(/socket hang up|ECONNRESET/);
  });

  it('is transient on a 503 to the upgrade and final on a 403, each with its status', async () => {
    expect(classify(await openFailure('busy'))).toEqual({
      transient: true,
      status: 503,
      text: "HTTP 503 to the stream's upgrade",
      retryAfterSeconds: null,
    });
    expect(classify(await openFailure('forbidden'))).toEqual({
      transient: false,
      status: 403,
      text: "HTTP 403 to the stream's upgrade",
      retryAfterSeconds: null,
    });
  });
});
