// verify's own bound on a rollout (verifyBoundsMs: progressDeadlineSeconds + the longest grace +
// 60 s), the fallback for a Deployment whose controller never says ProgressDeadlineExceeded, and
// the two "rollout did not complete" codes: ROLLOUT_STALLED (verify, exit 5: the team's Deployment
// is left mid-rollout) and ROLLOUT_NOT_COMPLETE (run's rollout lab, exit 1: termlab's own
// Deployment, deleted by its cleanup, a lab scenario that ended early).
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as k8s from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimCluster, type SimCluster } from '../../cluster/sim/index.ts';
import { defaultImages, type ImageMap, labServerBundle } from '../../cluster/sim/runtime.ts';
import { EXIT, exitCodeFor, gravestExit } from '../../lib/errors.ts';
import { verifyBoundsMs } from '../../harness/verify/run.ts';
import type { ReadTarget } from '../../harness/verify/target.ts';
import { runCli } from '../support/cli.ts';
import { createApp } from './support.ts';

const read = (progressDeadlineSeconds: number | null, templateGrace: number, podGraces: number[]) =>
  ({
    target: {
      deployment: { progressDeadlineSeconds, terminationGracePeriodSeconds: templateGrace },
      pods: podGraces.map((g) => ({ terminationGracePeriodSeconds: g })),
    },
  }) as unknown as ReadTarget;

describe("verify's own bound on the rollout it started", () => {
  it('is progressDeadlineSeconds + the longest grace (template or a running pod) + 60 s; the load pod runs that, both ready waits and the tail', () => {
    expect(verifyBoundsMs({ read: read(6, 1, [1, 1]), readyTimeoutMs: 120_000 })).toEqual({
      rolloutMs: 67_000,
      loadMs: 67_000 + 240_000 + 3_000,
    });
    // An old pod made with a longer grace than the template's now: its termination is what is waited for.
    expect(verifyBoundsMs({ read: read(6, 5, [30]), readyTimeoutMs: 10_000 }).rolloutMs).toBe(96_000);
    // No progressDeadlineSeconds read: the Deployment's default, 600 s.
    expect(verifyBoundsMs({ read: read(null, 30, []), readyTimeoutMs: 10_000 }).rolloutMs).toBe(690_000);
    // The load pod never runs longer than server/load.ts allows (30 min).
    expect(verifyBoundsMs({ read: read(3600, 30, []), readyTimeoutMs: 10_000 }).loadMs).toBe(30 * 60_000);
  });
});

describe('ROLLOUT_STALLED and ROLLOUT_NOT_COMPLETE', () => {
  it('verify leaves a team Deployment mid-rollout: exit 5, graver than a failed check; run ends a lab scenario early: exit 1', () => {
    expect(exitCodeFor('ROLLOUT_STALLED')).toBe(EXIT.rolloutStalled);
    expect(EXIT.rolloutStalled).toBe(5);
    expect(exitCodeFor('ROLLOUT_NOT_COMPLETE')).toBe(EXIT.checksFailed);
    expect(gravestExit([EXIT.checksFailed, EXIT.rolloutStalled])).toBe(EXIT.rolloutStalled);
  });

  it('each is raised by its own command only: verify never says ROLLOUT_NOT_COMPLETE, run never ROLLOUT_STALLED', () => {
    const raised = (folder: string) =>
      readdirSync(folder)
        .filter((f) => f.endsWith('.ts'))
        .map((f) => readFileSync(join(folder, f), 'utf8'))
        .join('\n');
    const verify = raised('harness/verify'),
      run = raised('harness/run');
    expect([verify.includes("'ROLLOUT_STALLED'"), verify.includes('ROLLOUT_NOT_COMPLETE')]).toEqual([true, false]);
    expect([run.includes("'ROLLOUT_NOT_COMPLETE'"), run.includes('ROLLOUT_STALLED')]).toEqual([true, false]);
  });
});

/** The API as the client sees it, but no Deployment carries a Progressing condition (a controller that never says it gave up). */
async function withoutProgressing(upstream: string): Promise<{ server: string; stop(): Promise<void> }> {
  const target = new URL(upstream);
  const strip = (o: any) => {
    for (const d of [o, o?.object, ...(o?.items ?? [])])
      if (d?.status?.conditions)
        d.status.conditions = d.status.conditions.filter((c: { type: string }) => c.type !== 'Progressing');
    return o;
  };
  const server: Server = createServer((req, res) => {
    const deployments =
      req.method === 'GET' && /^\/apis\/apps\/v1\/(namespaces\/[^/]+\/)?deployments(\/|\?|$)/.test(req.url ?? '');
    const headers = {
      ...req.headers,
      host: target.host,
      ...(deployments ? { 'accept-encoding': 'identity', accept: 'application/json' } : {}),
    };
    const out = httpsRequest(
      {
        host: target.hostname,
        port: target.port,
        method: req.method,
        path: req.url,
        headers,
        rejectUnauthorized: false,
      },
      (answer) => {
        if (!deployments) {
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
          return;
        }
        const { 'content-length': _, ...rest } = answer.headers;
        res.writeHead(answer.statusCode ?? 502, rest);
        // A watch is one JSON object a line; a get or list one object: rewritten line by line either way.
        let buffered = '';
        const flush = (text: string) => {
          if (text.trim()) {
            try {
              res.write(JSON.stringify(strip(JSON.parse(text))) + '\n');
            } catch {
              res.write(text);
            }
          }
        };
        answer.setEncoding('utf8');
        answer.on('data', (chunk: string) => {
          buffered += chunk;
          let nl: number;
          while ((nl = buffered.indexOf('\n')) >= 0) {
            flush(buffered.slice(0, nl));
            buffered = buffered.slice(nl + 1);
          }
        });
        answer.on('end', () => {
          flush(buffered);
          res.end();
        });
        res.on('close', () => answer.destroy());
      },
    );
    out.on('error', () => res.destroy());
    req.pipe(out);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    server: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

let sim: SimCluster;
let images: ImageMap;
let proxy: Awaited<ReturnType<typeof withoutProgressing>>;
const dir = mkdtempSync(join(tmpdir(), 'termlab-verify-bound-'));
const APP_IMAGE = 'shop/web';

beforeAll(async () => {
  const lab = defaultImages(await labServerBundle());
  images = { ...lab, [APP_IMAGE]: lab['termlab/lab-server']! };
  sim = await startSimCluster({ images });
  const kc = new k8s.KubeConfig();
  kc.loadFromString(sim.kubeconfig);
  await createApp(kc, 'default', {
    name: 'web-silent',
    image: `${APP_IMAGE}:1`,
    replicas: 2,
    progressDeadlineSeconds: 6,
    preStopSleep: 1,
    grace: 1,
  });
  proxy = await withoutProgressing(sim.server);
  const token = kc.getCurrentUser()!.token!;
  writeFileSync(
    join(dir, 'kubeconfig'),
    `apiVersion: v1\nkind: Config\nclusters: [{name: p, cluster: {server: "${proxy.server}", insecure-skip-tls-verify: true}}]\nusers: [{name: u, user: {token: "${token}"}}]\ncontexts: [{name: p, context: {cluster: p, user: u}}]\ncurrent-context: p\n`,
  );
}, 120_000);
afterAll(async () => {
  await proxy?.stop();
  await sim?.stop();
});

describe('a rollout that never completes, with no word from the controller', () => {
  it("ends at verify's own bound (6 s + 1 s + 60 s), exit 5, saying it was verify's bound and that the Deployment set no condition", async () => {
    delete images[APP_IMAGE];
    const r = await runCli([
      'verify',
      'deployment/web-silent',
      '--kubeconfig',
      join(dir, 'kubeconfig'),
      '--path',
      '/work?ms=100',
      '--rate',
      '10',
      '--output-dir',
      join(dir, 'out'),
      '-o',
      'json',
    ]);
    expect(r.code, r.stderr).toBe(EXIT.rolloutStalled);
    expect(r.stderr).toMatch(
      /ROLLOUT_STALLED: deployment\/web-silent in namespace default did not finish rolling out: waited \d+s for 2 updated, available replicas of generation 2 and its 2 old pod\(s\) gone, and verify's own bound ran out \(67s: progressDeadlineSeconds \+ the grace \+ 60s\)/,
    );
    expect(r.stderr).toContain('the Deployment says no Progressing condition');
    const summary = JSON.parse(r.stdout.slice(r.stdout.indexOf('\n{') + 1)) as {
      verdict: string;
      rolloutStalled: boolean;
      observation: string;
    };
    expect(summary).toMatchObject({ verdict: 'inconclusive', rolloutStalled: true });
    const offline = await runCli(['grade', summary.observation, '-o', 'json']);
    expect(offline.code).toBe(EXIT.rolloutStalled);
  }, 300_000);
});
