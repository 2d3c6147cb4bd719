// Only the holder of a sim's token gets in: no token, a malformed one, or another sim's token get
// a 401 Status and never reach a handler, for every kind of request the sim serves.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, statSync } from 'node:fs';
import { chmod, mkdir, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { request } from 'node:https';
import { join } from 'node:path';
import { Agent, fetch } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UNAUTHORIZED_STATUS } from '../../cluster/sim/auth.ts';
import { startSimCluster, writeKubeconfigFile, type SimCluster } from '../../cluster/sim/index.ts';
import { isReady, labPod, simCA, simToken, startSimClient, watchPod, type SimClient } from '../support/sim.ts';

let owner: SimClient;
let other: SimCluster;
let pod: string;
let trustSim: Agent;

beforeAll(async () => {
  [owner, other] = await Promise.all([startSimClient(), startSimCluster()]);
  trustSim = new Agent({ connect: { ca: simCA(owner.sim) } });
  const created = await owner.core.createNamespacedPod({ namespace: 'default', body: labPod('guarded', { grace: 1 }) });
  pod = `/api/v1/namespaces/default/pods/${created.metadata!.name}`;
  const watch = await watchPod(owner.kc, 'default', 'guarded');
  await watch.waitFor(isReady, 'the pod Ready');
  watch.stop();
});
afterAll(async () => {
  await Promise.all([owner?.sim.stop(), other?.stop(), trustSim?.close()]);
});

const credentials = () =>
  ({
    'no token': {},
    "another sim's token": { authorization: `Bearer ${simToken(other)}` },
    'the token without its scheme': { authorization: simToken(owner.sim) },
    'the token with a byte more': { authorization: `Bearer ${simToken(owner.sim)}x` },
  }) as Record<string, Record<string, string>>;
const ownerHeaders = () => ({ authorization: `Bearer ${simToken(owner.sim)}` });

const requests: [string, string, string, unknown?][] = [
  ['discovery', 'GET', '/api/v1'],
  ['a list', 'GET', '/api/v1/namespaces/default/pods'],
  ['a watch', 'GET', '/api/v1/namespaces/default/pods?watch=true'],
  ['a log follow', 'GET', '/api/v1/namespaces/default/pods/guarded/log?follow=true'],
  ['the ground truth', 'GET', '/termlab-sim/truth'],
  ['a fault', 'POST', '/termlab-sim/faults', { fault: 'fail-next-delete', namespace: 'default', name: 'guarded' }],
  ['a delete', 'DELETE', '/api/v1/namespaces/default/pods/guarded'],
];

/**
 * Asks for a WebSocket upgrade by hand (ws's client will not offer kubectl's `SPDY/3.1+…` protocol)
 * and resolves with the HTTP status and body when refused, or 101.
 */
function upgrade(
  path: string,
  protocols: string[],
  headers: Record<string, string>,
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(`${owner.sim.server}${path}`, {
      ca: simCA(owner.sim),
      headers: {
        ...headers,
        connection: 'Upgrade',
        upgrade: 'websocket',
        'sec-websocket-version': '13',
        'sec-websocket-key': randomBytes(16).toString('base64'),
        'sec-websocket-protocol': protocols.join(', '),
      },
    });
    req.on('upgrade', (_res, socket) => {
      socket.destroy();
      resolve({ status: 101, body: '' });
    });
    req.on('response', (res) => {
      let body = '';
      res.on('data', (chunk: Buffer) => {
        body += chunk;
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

const upgrades: [string, string, string[]][] = [
  ['port-forward (client-node)', '/portforward?ports=8080', ['v4.channel.k8s.io']],
  ['port-forward (kubectl tunnel)', '/portforward', ['SPDY/3.1+portforward.k8s.io']],
  ['exec', '/exec?command=ls&stdout=true', ['v5.channel.k8s.io']],
];

describe('the simulated cluster admits only its owner', () => {
  it.each(requests)('refuses %s without the right token and runs no handler', async (_what, method, path, body) => {
    for (const [how, headers] of Object.entries(credentials())) {
      const res = await fetch(`${owner.sim.server}${path}`, {
        method,
        dispatcher: trustSim,
        headers: { ...headers, 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      expect({ how, status: res.status, body: await res.json() }).toEqual({
        how,
        status: 401,
        body: UNAUTHORIZED_STATUS,
      });
    }
    // Nothing reached a handler: the pod is still there, not deleting, and no delete fault was armed.
    const still = await owner.core.readNamespacedPod({ name: 'guarded', namespace: 'default' });
    expect(still.metadata?.deletionTimestamp).toBeUndefined();
    expect(owner.sim.truth(still.metadata!.uid!)?.deleteReceivedAt).toBeUndefined();
  });

  it('serves the same requests with the token from its kubeconfig', async () => {
    for (const [, method, path] of requests.filter(([, method]) => method === 'GET')) {
      const controller = new AbortController();
      const res = await fetch(`${owner.sim.server}${path}`, {
        method,
        headers: ownerHeaders(),
        signal: controller.signal,
        dispatcher: trustSim,
      });
      expect({ path, status: res.status }).toEqual({ path, status: 200 });
      controller.abort();
    }
  });

  it.each(upgrades)('refuses a %s upgrade without the right token', async (_what, sub, protocols) => {
    for (const [how, headers] of Object.entries(credentials())) {
      const refused = await upgrade(`${pod}${sub}`, protocols, headers);
      expect({ how, status: refused.status, body: JSON.parse(refused.body) }).toEqual({
        how,
        status: 401,
        body: UNAUTHORIZED_STATUS,
      });
    }
    expect(await upgrade(`${pod}${sub}`, protocols, ownerHeaders())).toEqual({ status: 101, body: '' });
  });

  it('makes a different token on every start', () => {
    expect(simToken(owner.sim)).not.toBe(simToken(other));
    expect(simToken(owner.sim)).toMatch(/^[A-Za-z0-9_-]{43}$/);
  });
});

describe('the kubeconfig file', () => {
  const mode = (path: string) => statSync(path).mode & 0o777;

  it('is written 0600 in a folder created 0700', async () => {
    const root = mkdtempSync(join(tmpdir(), 'termlab-kubeconfig-'));
    const path = join(root, 'made', 'kubeconfig');
    await writeKubeconfigFile(path, owner.sim.kubeconfig, false);
    expect({ file: mode(path), folder: mode(join(root, 'made')) }).toEqual({ file: 0o600, folder: 0o700 });
  });

  it('replaces a readable file by a private one and tightens its own folder', async () => {
    const folder = join(mkdtempSync(join(tmpdir(), 'termlab-kubeconfig-')), 'sim');
    await mkdir(folder, { mode: 0o755 });
    await chmod(folder, 0o755);
    const path = join(folder, 'kubeconfig');
    await writeFile(path, 'old', { mode: 0o644 });
    await writeKubeconfigFile(path, owner.sim.kubeconfig, true);
    expect({ file: mode(path), folder: mode(folder) }).toEqual({ file: 0o600, folder: 0o700 });
  });
});
