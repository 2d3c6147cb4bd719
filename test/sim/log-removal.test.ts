// A followed log ends when the kubelet removes the dead container with its log file, not only at the log
// reader's next look (cri-client pkg/logs/logs.go waitLogs wakes on the file's removal; seen on the v1.37.2 node).
import { request, createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { KubeletPause } from '../../cluster/sim/faults.ts';
import { serveLog } from '../../cluster/sim/logs.ts';
import { ContainerProcess } from '../../cluster/sim/runtime.ts';

const servers: Server[] = [];
afterEach(() => {
  for (const s of servers.splice(0)) s.close();
});

async function follow(container: ContainerProcess, checkPeriodMs: number) {
  const server = createServer((_req, res) =>
    serveLog(
      res,
      { process: container, removed: false, containerID: 'sim://test' },
      { follow: true, timestamps: false, sinceTime: null, tailLines: null, checkPeriodMs },
      new KubeletPause(),
    ),
  );
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return new Promise<{ firstLine: Promise<string>; ended: Promise<string> }>((resolve) => {
    request({ host: '127.0.0.1', port, path: '/' }, (res) => {
      let body = '';
      let sawLine!: (text: string) => void;
      const firstLine = new Promise<string>((r) => {
        sawLine = r;
      });
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        body += chunk;
        if (body.includes('\n')) sawLine(body);
      });
      resolve({ firstLine, ended: new Promise((r) => res.on('end', () => r(body))) });
    }).end();
  });
}

describe('a followed log of an exited container', () => {
  it('ends when the kubelet removes the container, long before the reader would look again', async () => {
    const container = new ContainerProcess([process.execPath, '-e', "console.log('last'); setTimeout(() => {}, 300)"], {
      PATH: process.env.PATH ?? '',
    });
    // A reader that looks again only after an hour: only the removal can end this follow within the test.
    const stream = await follow(container, 3_600_000);
    expect(await stream.firstLine).toBe('last\n');
    await container.exited;
    let ended = false;
    void stream.ended.then(() => {
      ended = true;
    });
    // The exit alone does not end it: the reader still waits for its look (the exit's events are all delivered by now).
    await new Promise((r) => setImmediate(r));
    expect(ended).toBe(false);
    container.removeLog();
    expect(await stream.ended).toBe('last\n');
  });
});
