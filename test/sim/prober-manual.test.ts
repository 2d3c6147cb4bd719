// The readiness worker's manual runs (worker.go, prober_manager.go UpdatePodStatus): at the first sync of a running
// container and at every later one while it is not ready, a probe runs at once instead of at the next tick.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { CONNECTION_REFUSED, type ReadinessProber, startReadinessProber } from '../../cluster/sim/prober.ts';

let server: Server | undefined;
let prober: ReadinessProber | undefined;
afterEach(async () => {
  prober?.stop();
  await new Promise<void>((done) => (server ? server.close(() => done()) : done()));
});

/** A /readyz that answers `status()` and counts each probe. */
async function readyz(
  status: () => number,
): Promise<{ port: number; probes: () => number; next: () => Promise<void> }> {
  let count = 0;
  const waiters: (() => void)[] = [];
  server = createServer((_req, res) => {
    count++;
    res.writeHead(status()).end();
    for (const w of waiters.splice(0)) w();
  });
  await new Promise<void>((done) => server!.listen(0, '127.0.0.1', () => done()));
  return {
    port: (server.address() as AddressInfo).port,
    probes: () => count,
    next: () => new Promise((done) => waiters.push(done)),
  };
}

describe('simulated kubelet: readiness manual runs', () => {
  it('probes at once at each sync while the container is not ready, and not once it is', async () => {
    let code = 503;
    const http = await readyz(() => code);
    const changes: boolean[] = [];
    // A period far longer than the test: every probe seen here is a manual run.
    prober = startReadinessProber({
      target: () => ({ host: '127.0.0.1', port: http.port }),
      probe: { periodSeconds: 600, httpGet: { path: '/readyz', port: http.port } },
      onChange: (ready) => changes.push(ready),
      onFailure: () => {},
    });
    prober.syncedNotReady();
    expect(http.probes()).toBe(0); // not before the container was seen running
    let probed = http.next();
    prober.containerStarted();
    await probed;
    expect(changes).toEqual([false]);
    code = 200;
    probed = http.next();
    prober.syncedNotReady();
    await probed;
    await expect.poll(() => changes).toEqual([false, true]);
    prober.syncedNotReady();
    // A probe in flight would have reached the server by the time a fresh one does.
    const control = await fetch(`http://127.0.0.1:${http.port}/readyz`);
    expect(control.status).toBe(200);
    expect(http.probes()).toBe(3);
  });

  it("asks where the port is at each probe: refused while nothing listens there, then the server's answer", async () => {
    const http = await readyz(() => 200);
    let where: { host: string; port: number } | undefined;
    const changes: boolean[] = [];
    const failures: string[] = [];
    prober = startReadinessProber({
      target: () => where,
      probe: { periodSeconds: 600, failureThreshold: 1, httpGet: { path: '/readyz', port: 8080 } },
      onChange: (ready) => changes.push(ready),
      onFailure: (output) => failures.push(output),
    });
    prober.containerStarted();
    await expect.poll(() => failures).toEqual([`Get "http://pod:8080/readyz": ${CONNECTION_REFUSED}`]);
    where = { host: '127.0.0.1', port: http.port };
    const probed = http.next();
    prober.syncedNotReady();
    await probed;
    await expect.poll(() => changes).toEqual([false, true]);
  });
});
