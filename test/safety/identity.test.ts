// The owner label is who the cluster says the caller is: the simulated cluster answers a
// SelfSubjectReview as v1.37 does, a run's pods carry the answer, and an API server that does not
// serve the API gets termlab's own name with the reason written down.
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimCluster, type SimCluster } from '../../cluster/sim/index.ts';
import { connect } from '../../harness/kube/index.ts';
import { IDENTITY_ANNOTATION, ownerLabelFor, ownershipOf, whoAmI } from '../../harness/safety/identity.ts';
import { renderPod } from '../../harness/scenario/render.ts';
import { loadScenarioSet, loadTemplate } from '../../harness/scenario/load.ts';
import { runCli } from '../support/cli.ts';
import { simToken } from '../support/sim.ts';

describe('SelfSubjectReview on the simulated cluster', () => {
  let sim: SimCluster;
  beforeAll(async () => {
    sim = await startSimCluster();
  });
  afterAll(async () => {
    await sim.stop();
  });

  it('answers 201 with the shape the real API server gives (kind, creationTimestamp, status.userInfo)', async () => {
    const cluster = await connect({ kubeconfigText: sim.kubeconfig });
    const init = await cluster.kc.applyToFetchOptions({});
    const { request } = await import('node:https');
    const answer = await new Promise<{ status: number; body: any }>((resolve, reject) => {
      const req = request(
        `${cluster.server}/apis/authentication.k8s.io/v1/selfsubjectreviews`,
        {
          method: 'POST',
          agent: init.agent as never,
          headers: { authorization: `Bearer ${simToken(sim)}`, 'content-type': 'application/json' },
        },
        (res) => {
          let text = '';
          res.on('data', (c) => {
            text += c;
          });
          res.on('end', () => resolve({ status: res.statusCode!, body: JSON.parse(text) }));
        },
      );
      req.on('error', reject);
      req.end(JSON.stringify({ apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' }));
    });
    expect(answer.status).toBe(201);
    expect(answer.body).toMatchObject({
      kind: 'SelfSubjectReview',
      apiVersion: 'authentication.k8s.io/v1',
      status: { userInfo: { username: 'termlab-sim:owner', groups: ['system:masters', 'system:authenticated'] } },
    });
    expect(Number.isNaN(Date.parse(answer.body.metadata.creationTimestamp))).toBe(false);
  });

  it('a run labels its pods with that identity and records it, with no --owner', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'termlab-identity-'));
    const r = await runCli(['run', '--sim', '--only', 'short-grace', '--output-dir', join(dir, 'run')], {
      TERMLAB_STATE_DIR: join(dir, 'state'),
    });
    expect(r.code, r.stderr).toBe(0);
    const owner = ownerLabelFor('termlab-sim:owner');
    expect(r.stdout).toContain(`owner ${owner} (the cluster says you are termlab-sim:owner)`);
    const observation = JSON.parse(readFileSync(join(dir, 'run', 'short-grace.observation.json'), 'utf8'));
    expect(observation.run.ownerId).toBe(owner);
    const [record] = readdirSync(join(dir, 'state', 'runs')).map((f) =>
      JSON.parse(readFileSync(join(dir, 'state', 'runs', f), 'utf8')),
    );
    expect(record).toMatchObject({ owner, identity: 'termlab-sim:owner', ownerSource: 'SelfSubjectReview' });
  });
});

describe('a pod carries the full name', () => {
  it('in the termlab.io/identity annotation, beside the owner label', async () => {
    const [scenario] = (await loadScenarioSet(undefined, ['short-grace'])).scenarios;
    const pod = renderPod(await loadTemplate(), scenario as never, {
      podName: 'p',
      owner: ownerLabelFor('system:serviceaccount:termlab:alice'),
      identity: 'system:serviceaccount:termlab:alice',
      runId: 'run-1',
    });
    expect(pod.metadata?.annotations?.[IDENTITY_ANNOTATION]).toBe('system:serviceaccount:termlab:alice');
    expect(pod.metadata?.labels?.['termlab.io/owner']).toBe(ownerLabelFor('system:serviceaccount:termlab:alice'));
  });
});

describe('an API server without SelfSubjectReview', () => {
  let server: Server;
  let url: string;
  beforeAll(async () => {
    // Answers as a 1.27 API server does: /version, and 404 for a group version it does not serve.
    server = createServer((req, res) => {
      const body =
        req.url === '/version'
          ? { major: '1', minor: '27', gitVersion: 'v1.27.16' }
          : {
              kind: 'Status',
              apiVersion: 'v1',
              status: 'Failure',
              message: 'the server could not find the requested resource',
              reason: 'NotFound',
              code: 404,
            };
      res.writeHead(req.url === '/version' ? 200 : 404, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it("falls back to termlab's own name and says why", async () => {
    const kubeconfigText = `apiVersion: v1\nkind: Config\nclusters: [{ name: old, cluster: { server: "${url}", insecure-skip-tls-verify: true } }]\nusers: [{ name: old, user: { token: t } }]\ncontexts: [{ name: old, context: { cluster: old, user: old } }]\ncurrent-context: old\n`;
    const cluster = await connect({ kubeconfigText });
    const identity = await whoAmI(cluster);
    expect(identity).toEqual({
      source: 'termlab',
      username: null,
      why: 'the API server does not serve SelfSubjectReview (HTTP 404)',
    });
    expect(ownershipOf(identity, undefined, () => 'user-1234abcd')).toMatchObject({
      owner: 'user-1234abcd',
      source: 'termlab',
      note: expect.stringContaining('HTTP 404'),
    });
  });
});

describe('--owner beside a reported identity', () => {
  it('names the pods, and the identity is still kept', () => {
    const identity = {
      source: 'SelfSubjectReview' as const,
      username: 'system:serviceaccount:termlab:alice',
      groups: [],
    };
    expect(ownershipOf(identity, 'faults', () => 'x')).toMatchObject({
      owner: 'faults',
      source: '--owner',
      identity: 'system:serviceaccount:termlab:alice',
    });
    expect(ownershipOf(identity, undefined, () => 'x')).toMatchObject({
      owner: ownerLabelFor(identity.username),
      source: 'SelfSubjectReview',
    });
  });
});
