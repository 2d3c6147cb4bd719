// The real kubectl's typed commands, which send protobuf bodies, against the simulated cluster: the
// objects they make read back (`kubectl get -o json`) as the same commands' objects read back from the
// real node v1.37.2 (recorded below), and the Deployment's pods come up Ready. With
// TERMLAB_NODE_KUBECONFIG set (and /work/node.lock held), the same check runs against that cluster too.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimCluster, type SimCluster } from '../../cluster/sim/index.ts';
import { hasKubectl, runKubectl } from '../support/kubectl.ts';

if (!hasKubectl) console.warn('kubectl not found: skipping the kubectl protobuf suite (CI installs it)');

const IMAGE = 'termlab/lab-server:0.1.0';

/**
 * What the real node v1.37.2 answered (kubectl v1.32.4, 2026-12-01) for the commands below, the
 * fields that do not vary between runs: a Deployment's metadata and spec, each Service's, and the
 * Namespace. Addresses and node ports vary and are checked by pattern.
 */
const LABELS = (app: string) => ({ app });
const ON_THE_NODE = {
  deployment: {
    metadata: { name: 'web', labels: LABELS('web'), annotations: { 'deployment.kubernetes.io/revision': '1' } },
    spec: {
      progressDeadlineSeconds: 600,
      replicas: 3,
      revisionHistoryLimit: 10,
      selector: { matchLabels: LABELS('web') },
      strategy: { rollingUpdate: { maxSurge: '25%', maxUnavailable: '25%' }, type: 'RollingUpdate' },
      template: {
        metadata: { labels: LABELS('web') },
        spec: {
          containers: [
            {
              image: IMAGE,
              imagePullPolicy: 'IfNotPresent',
              name: 'lab-server',
              resources: {},
              terminationMessagePath: '/dev/termination-log',
              terminationMessagePolicy: 'File',
            },
          ],
          dnsPolicy: 'ClusterFirst',
          restartPolicy: 'Always',
          schedulerName: 'default-scheduler',
          securityContext: {},
          terminationGracePeriodSeconds: 30,
        },
      },
    },
  },
  services: [
    {
      metadata: { labels: LABELS('web'), name: 'web' },
      spec: {
        clusterIP: 'IP',
        clusterIPs: ['IP'],
        internalTrafficPolicy: 'Cluster',
        ipFamilies: ['IPv4'],
        ipFamilyPolicy: 'SingleStack',
        ports: [{ port: 80, protocol: 'TCP', targetPort: 8080 }],
        selector: LABELS('web'),
        sessionAffinity: 'None',
        type: 'ClusterIP',
      },
      status: { loadBalancer: {} },
    },
    {
      metadata: { labels: LABELS('svc2'), name: 'svc2' },
      spec: {
        clusterIP: 'IP',
        clusterIPs: ['IP'],
        internalTrafficPolicy: 'Cluster',
        ipFamilies: ['IPv4'],
        ipFamilyPolicy: 'SingleStack',
        ports: [{ name: '80-8080', port: 80, protocol: 'TCP', targetPort: 8080 }],
        selector: LABELS('svc2'),
        sessionAffinity: 'None',
        type: 'ClusterIP',
      },
      status: { loadBalancer: {} },
    },
    {
      metadata: { labels: LABELS('np1'), name: 'np1' },
      spec: {
        clusterIP: 'IP',
        clusterIPs: ['IP'],
        externalTrafficPolicy: 'Cluster',
        internalTrafficPolicy: 'Cluster',
        ipFamilies: ['IPv4'],
        ipFamilyPolicy: 'SingleStack',
        ports: [{ name: '80-8080', nodePort: 'PORT', port: 80, protocol: 'TCP', targetPort: 8080 }],
        selector: LABELS('np1'),
        sessionAffinity: 'None',
        type: 'NodePort',
      },
      status: { loadBalancer: {} },
    },
  ],
  namespace: (name: string) => ({
    metadata: { labels: { 'kubernetes.io/metadata.name': name }, name },
    spec: { finalizers: ['kubernetes'] },
    status: { phase: 'Active' },
  }),
};

const pick = (o: any, keys: string[]) => Object.fromEntries(keys.filter((k) => k in o).map((k) => [k, o[k]]));
const meta = (o: any, keys = ['name', 'labels', 'annotations']) => pick(o.metadata, keys);

/** A Service as read back, its cluster IPs and node ports replaced by what they must look like. */
function serviceShape(s: any) {
  const ip = (v: string) => (/^10\.96\.\d+\.\d+$/.test(v) ? 'IP' : v);
  const spec = { ...s.spec, clusterIP: ip(s.spec.clusterIP), clusterIPs: s.spec.clusterIPs.map(ip) };
  spec.ports = s.spec.ports.map((p: any) =>
    p.nodePort === undefined ? p : { ...p, nodePort: p.nodePort >= 30000 && p.nodePort <= 32767 ? 'PORT' : p.nodePort },
  );
  return { metadata: meta(s, ['labels', 'name']), spec, status: s.status };
}

/** The typed commands in a new namespace, then what they made, read back as JSON. */
async function typedCommands(env: NodeJS.ProcessEnv, namespace: string) {
  const kubectl = (args: string[]) => runKubectl(env, args, 120_000);
  const ok = async (args: string[], expected: string) => {
    const r = await kubectl(args);
    expect(r.err, `kubectl ${args.join(' ')}`).toBe('');
    expect(r.out).toContain(expected);
  };
  await ok(['create', 'namespace', namespace], `namespace/${namespace} created`);
  const n = ['--namespace', namespace];
  await ok([...n, 'create', 'deployment', 'web', `--image=${IMAGE}`, '--replicas=3'], 'deployment.apps/web created');
  await ok([...n, 'expose', 'deployment', 'web', '--port', '80', '--target-port', '8080'], 'service/web exposed');
  await ok([...n, 'create', 'service', 'clusterip', 'svc2', '--tcp=80:8080'], 'service/svc2 created');
  await ok([...n, 'create', 'service', 'nodeport', 'np1', '--tcp=80:8080'], 'service/np1 created');
  const rolled = await kubectl([...n, 'rollout', 'status', 'deployment/web', '--timeout=100s']);
  expect(rolled.out).toContain('deployment "web" successfully rolled out');
  const ready = await kubectl([...n, 'wait', '--for=condition=Ready', 'pods', '-l', 'app=web', '--timeout=60s']);
  expect(ready.code).toBe(0);
  const json = async (args: string[]) => JSON.parse((await kubectl([...n, 'get', ...args, '-o', 'json'])).out);
  const deployment = await json(['deployment', 'web']);
  const services = (await json(['service', 'web', 'svc2', 'np1'])).items;
  const pods = (await json(['pods', '-l', 'app=web'])).items;
  const ns = JSON.parse((await kubectl(['get', 'namespace', namespace, '-o', 'json'])).out);
  return { deployment, services, pods, namespace: ns };
}

function expectAsOnTheNode(made: Awaited<ReturnType<typeof typedCommands>>, namespace: string) {
  expect({ metadata: meta(made.deployment), spec: made.deployment.spec }).toEqual(ON_THE_NODE.deployment);
  expect(made.deployment.status).toMatchObject({
    replicas: 3,
    readyReplicas: 3,
    availableReplicas: 3,
    updatedReplicas: 3,
  });
  expect(made.services.map(serviceShape)).toEqual(ON_THE_NODE.services);
  expect({
    metadata: meta(made.namespace, ['labels', 'name']),
    spec: made.namespace.spec,
    status: made.namespace.status,
  }).toEqual(ON_THE_NODE.namespace(namespace));
  expect(made.pods).toHaveLength(3);
  for (const pod of made.pods) {
    expect(pod.status.conditions).toContainEqual(expect.objectContaining({ type: 'Ready', status: 'True' }));
    expect(pod.spec.containers[0]).toMatchObject({ name: 'lab-server', image: IMAGE });
  }
}

describe.skipIf(!hasKubectl)('kubectl typed commands (protobuf bodies) against the simulated cluster', () => {
  let sim: SimCluster;
  let env: NodeJS.ProcessEnv;
  beforeAll(async () => {
    sim = await startSimCluster();
    const dir = mkdtempSync(join(tmpdir(), 'termlab-protobuf-kubectl-'));
    writeFileSync(join(dir, 'kubeconfig'), sim.kubeconfig);
    env = { ...process.env, KUBECONFIG: join(dir, 'kubeconfig'), HOME: dir };
  });
  afterAll(async () => {
    await sim?.stop();
  });

  it('create deployment / expose / create service / create namespace make the objects a real cluster makes, and the pods come up Ready', async () => {
    expectAsOnTheNode(await typedCommands(env, 'shop'), 'shop');
  }, 120_000);

  it('answers a kind the sim does not serve with NotFound, before reading the body', async () => {
    const r = await runKubectl(env, ['create', 'secret', 'generic', 's1', '--from-literal=a=b'], 60_000);
    expect(r.code).not.toBe(0);
    expect(r.err).toContain(
      'the server could not find the requested resource (POST /api/v1/namespaces/default/secrets)',
    );
  });

  it('creates a ConfigMap from kubectl create configmap (a protobuf body)', async () => {
    const r = await runKubectl(env, ['create', 'configmap', 'cm1', '--from-literal=a=b', '-o', 'json'], 60_000);
    expect(r.code, r.err).toBe(0);
    expect(JSON.parse(r.out)).toMatchObject({ kind: 'ConfigMap', metadata: { name: 'cm1' }, data: { a: 'b' } });
  });
});

// The same commands against a real cluster, to re-check the recording: run under /work/node.lock with
// TERMLAB_NODE_KUBECONFIG=<worktree>/.termlab/node/kubeconfig.
const nodeKubeconfig = process.env.TERMLAB_NODE_KUBECONFIG;
describe.skipIf(!hasKubectl || !nodeKubeconfig)('kubectl typed commands against the real node', () => {
  const namespace = `termlab-protobuf-${process.pid}`;
  const env = { ...process.env, KUBECONFIG: nodeKubeconfig };
  afterAll(async () => {
    await runKubectl(env, ['delete', 'namespace', namespace, '--wait=false'], 60_000);
  });

  it('gives the recorded shapes', async () => {
    expectAsOnTheNode(await typedCommands(env, namespace), namespace);
  }, 240_000);
});
