// The instrument of measure:edge's race (dev/node/measure-edge-upstream.cjs), run as the pod runs it: it must
// answer a connection's first request and close a reused one without a byte, or the race figures mean nothing.
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { Agent, request } from 'node:http';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterEach, describe, expect, it } from 'vitest';
import { MODULE_DIR } from '../../dev/node/layout.ts';

let child: ChildProcess | undefined;
afterEach(async () => {
  if (child && child.exitCode === null) {
    child.kill('SIGTERM');
    await once(child, 'exit');
  }
});

async function start(): Promise<number> {
  child = spawn(process.execPath, [join(MODULE_DIR, 'measure-edge-upstream.cjs')], {
    env: { ...process.env, PORT: '0', POD_UID: 'pod-a' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const [line] = (await once(createInterface({ input: child.stdout! }), 'line')) as [string];
  return (JSON.parse(line) as { port: number }).port;
}

function send(port: number, path: string, agent: Agent, id: string, method = 'GET') {
  return new Promise<{ status: number; body: string } | { error: string }>((resolve) => {
    const req = request(
      { host: '127.0.0.1', port, path, method, agent, headers: { 'x-termlab-request': id } },
      (res) => {
        let body = '';
        res.on('data', (c) => {
          body += c;
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      },
    );
    req.on('error', (e) => resolve({ error: (e as NodeJS.ErrnoException).code ?? e.message }));
    req.end(method === 'POST' ? 'x=1' : undefined);
  });
}

describe("measure:edge's upstream", () => {
  it('answers the first request on a connection and closes a reused one without a byte, recording both', async () => {
    const port = await start();
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    try {
      expect(await send(port, '/warm', agent, 'w')).toEqual({ status: 200, body: '{"conn":1,"seq":1}' });
      // Node's client does not replay a request on a kept-alive socket the server closed: it sees the reset.
      expect(await send(port, '/close-reused', agent, 'r', 'POST')).toEqual({ error: 'ECONNRESET' });
      // A fresh connection's first request is answered, even on /close-reused.
      expect(await send(port, '/close-reused', agent, 'f')).toEqual({ status: 200, body: '{"conn":2,"seq":1}' });
      const log = await send(port, '/log', new Agent(), 'log');
      expect('body' in log && JSON.parse(log.body)).toEqual([
        { id: 'w', conn: 1, seq: 1, method: 'GET', path: '/warm', action: 'answered' },
        { id: 'r', conn: 1, seq: 2, method: 'POST', path: '/close-reused', action: 'closed' },
        { id: 'f', conn: 2, seq: 1, method: 'GET', path: '/close-reused', action: 'answered' },
      ]);
    } finally {
      agent.destroy();
    }
  });
});
