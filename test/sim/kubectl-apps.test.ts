// The real kubectl against the simulated cluster's Deployments, ReplicaSets, Services and EndpointSlices.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimCluster, type SimCluster } from '../../cluster/sim/index.ts';
import { hasKubectl, runKubectl } from '../support/kubectl.ts';

if (!hasKubectl) console.warn('kubectl not found: skipping the kubectl apps suite (CI installs it)');

let sim: SimCluster;
let env: NodeJS.ProcessEnv;
let dir: string;

function kubectl(args: string[], timeoutMs = 60_000) {
  return runKubectl(env, args, timeoutMs);
}

const MANIFEST = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: 2
  selector:
    matchLabels: { app: web }
  strategy:
    rollingUpdate: { maxSurge: 1, maxUnavailable: 0 }
  template:
    metadata:
      labels: { app: web }
    spec:
      terminationGracePeriodSeconds: 5
      containers:
        - name: lab
          image: termlab/lab-server:0.1.0
          ports: [{ name: http, containerPort: 8080 }]
          env: [{ name: LAB_MODE, value: immediate }]
          readinessProbe:
            httpGet: { path: /readyz, port: http }
            periodSeconds: 1
---
apiVersion: v1
kind: Service
metadata:
  name: web
spec:
  type: NodePort
  selector: { app: web }
  ports: [{ name: http, port: 80, targetPort: http }]
`;

describe.skipIf(!hasKubectl)('kubectl against the simulated cluster: Deployments and Services', () => {
  beforeAll(async () => {
    sim = await startSimCluster();
    dir = mkdtempSync(join(tmpdir(), 'termlab-kubectl-apps-'));
    writeFileSync(join(dir, 'kubeconfig'), sim.kubeconfig);
    writeFileSync(join(dir, 'web.yaml'), MANIFEST);
    env = { ...process.env, KUBECONFIG: join(dir, 'kubeconfig'), HOME: dir };
  });
  afterAll(async () => {
    await sim?.stop();
  });

  it('creates, lists, rolls out, scales and deletes a Deployment behind a Service', async () => {
    const created = await kubectl(['create', '-f', join(dir, 'web.yaml')]);
    expect(created.err).toBe('');
    expect(created.out).toContain('deployment.apps/web created');
    expect(created.out).toContain('service/web created');
    const status = await kubectl(['rollout', 'status', 'deployment/web', '--timeout=60s']);
    expect(status.out).toContain('deployment "web" successfully rolled out');
    expect(status.code).toBe(0);

    const deploy = await kubectl(['get', 'deploy', 'web']);
    expect(deploy.out).toMatch(/^NAME\s+READY\s+UP-TO-DATE\s+AVAILABLE\s+AGE\n/);
    expect(deploy.out).toMatch(/\nweb\s+2\/2\s+2\s+2\s+\d+s\n/);
    const rs = await kubectl(['get', 'rs']);
    expect(rs.out).toMatch(/\nweb-[a-z0-9]+\s+2\s+2\s+2\s+\d+s\n/);
    const svc = await kubectl(['get', 'svc', 'web']);
    expect(svc.out).toMatch(/\nweb\s+NodePort\s+10\.96\.\d+\.\d+\s+<none>\s+80:3\d{4}\/TCP\s+\d+s\n/);
    const slices = await kubectl(['get', 'endpointslices', '-l', 'kubernetes.io/service-name=web']);
    expect(slices.out).toMatch(/\nweb-[a-z0-9]{5}\s+IPv4\s+8080\s+127\.0\.0\.1,127\.0\.0\.1\s+\d+s\n/);

    // A new image tag (a strategic merge patch on the template) rolls out a second ReplicaSet.
    const set = await kubectl(['set', 'image', 'deployment/web', 'lab=termlab/lab-server:0.2.0']);
    expect(set.out).toContain('deployment.apps/web image updated');
    const second = await kubectl(['rollout', 'status', 'deployment/web', '--timeout=60s']);
    expect(second.out).toContain('deployment "web" successfully rolled out');
    const history = await kubectl([
      'get',
      'rs',
      '-o',
      'jsonpath={range .items[*]}{.metadata.annotations.deployment\\.kubernetes\\.io/revision}={.spec.replicas}={.spec.template.spec.containers[0].image}{"\\n"}{end}',
    ]);
    expect(history.out.trim().split('\n').sort()).toEqual([
      '1=0=termlab/lab-server:0.1.0',
      '2=2=termlab/lab-server:0.2.0',
    ]);

    const scaled = await kubectl(['scale', 'deployment/web', '--replicas=1']);
    expect(scaled.out).toContain('deployment.apps/web scaled');
    const third = await kubectl(['rollout', 'status', 'deployment/web', '--timeout=60s']);
    expect(third.code).toBe(0);
    expect((await kubectl(['get', 'deploy', 'web'])).out).toMatch(/\nweb\s+1\/1\s+1\s+1\s+/);

    // kubectl apply: a strategic merge patch computed from the manifest.
    writeFileSync(join(dir, 'web.yaml'), MANIFEST.replace('replicas: 2', 'replicas: 3'));
    const applied = await kubectl(['apply', '-f', join(dir, 'web.yaml')]);
    expect(applied.out).toContain('deployment.apps/web configured');
    expect((await kubectl(['rollout', 'status', 'deployment/web', '--timeout=60s'])).code).toBe(0);
    expect((await kubectl(['get', 'deploy', 'web'])).out).toMatch(/\nweb\s+3\/3\s+3\s+3\s+/);

    const deleted = await kubectl(['delete', 'deployment', 'web']);
    expect(deleted.out).toContain('deployment.apps "web" deleted');
    // The garbage collector takes the ReplicaSets and their pods.
    const waited = await kubectl(['wait', '--for=delete', 'pods', '-l', 'app=web', '--timeout=60s']);
    expect(waited.code).toBe(0);
    expect((await kubectl(['get', 'rs', '-o', 'name'])).out).toBe('');
    expect((await kubectl(['delete', 'svc', 'web'])).out).toContain('service "web" deleted');
  });

  // kubectl's typed commands (protobuf bodies) are in protobuf-kubectl.test.ts.
  it('exposes a Deployment, serves the nodePort, restarts a rollout', async () => {
    writeFileSync(join(dir, 'hint.yaml'), MANIFEST.split('---')[0]!.replaceAll('web', 'hint'));
    expect((await kubectl(['create', '-f', join(dir, 'hint.yaml')])).out).toContain('deployment.apps/hint created');
    expect(
      (await kubectl(['expose', 'deployment', 'hint', '--type=NodePort', '--port=80', '--target-port=8080'])).out,
    ).toContain('service/hint exposed');
    expect((await kubectl(['rollout', 'status', 'deployment/hint', '--timeout=60s'])).code).toBe(0);
    const nodePort = Number((await kubectl(['get', 'svc', 'hint', '-o', 'jsonpath={.spec.ports[0].nodePort}'])).out);
    const pods = (
      await kubectl(['get', 'pods', '-l', 'app=hint', '-o', 'jsonpath={.items[*].metadata.uid}'])
    ).out.split(' ');
    // The proxy takes the endpoints after its sync delay: wait for its view, then a request reaches a pod.
    await expect
      .poll(async () => (await sim.proxyTruth('default', 'hint'))?.changes.at(-1)?.readyPodUids.length, {
        timeout: 10_000,
      })
      .toBe(2);
    const answer = await fetch(`http://127.0.0.1:${nodePort}/work?ms=1`);
    await answer.text();
    expect(answer.status).toBe(200);
    expect(pods).toContain((await sim.proxyTruth('default', 'hint'))!.connections.at(-1)!.podUid);
    const restarted = await kubectl(['rollout', 'restart', 'deployment/hint']);
    expect(restarted.out).toContain('deployment.apps/hint restarted');
    expect((await kubectl(['rollout', 'status', 'deployment/hint', '--timeout=60s'])).out).toContain(
      'successfully rolled out',
    );
    expect((await kubectl(['get', 'rs', '-l', 'app=hint', '-o', 'name'])).out.trim().split('\n')).toHaveLength(2);
    await kubectl(['delete', 'deployment,svc', 'hint']);
  });
});
