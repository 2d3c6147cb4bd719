// npm run cluster:up — a real single-node Kubernetes on this machine: etcd, the API server,
// controller manager, scheduler, containerd, the kubelet and kube-proxy, with the lab images loaded.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { request } from 'node:https';
import { request as httpRequest } from 'node:http';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { buildPrograms, buildTraefik } from './build.ts';
import * as k8s from '@kubernetes/client-node';
import { EDGE_NAMESPACE, EDGE_NODE_PORT, installEdge } from './edge.ts';
import { TRAEFIK_IMAGE, TRAEFIK_VERSION, traefikBinary } from './traefik.ts';
import { isTermlabError, TermlabError } from '../../lib/errors.ts';
import { devArgs, runDevTool } from '../entry.ts';
import { KUBE_FLAG, minorOf, requestedVersion, upGates, upVersion } from './versions.ts';
import { CONTAINERD_VERSION, containerdBinaries } from './containerd.ts';
import { describeGates, type FeatureGates, featureGatesArgs, parseFeatureGates } from './gates.ts';
import {
  LAB_IMAGE,
  PAUSE_IMAGE,
  writeCniConfig,
  writeContainerdConfig,
  writeKubeletConfig,
  writeKubeProxyConfig,
} from './configs.ts';
import { buildLabImage, buildPauseImage, buildTraefikImage, importImage } from './images.ts';
import { BRIDGE, binaries, CONTEXT, NODE_IP, NODE_NAME, POD_CIDR, RUN, SERVICE_CIDR, STATE, paths } from './layout.ts';
import { ensureCredentials, kubeconfig } from './pki.ts';
import { printedByStep, sh, startComponent, step, StepError, timings, waitUntil } from './steps.ts';

// klog level: 2 by default; 3 logs "Running preStop hook" and 4 each pod worker step (npm run fidelity reads them).
const KUBELET_VERBOSITY = /^[0-9]$/.test(process.env.TERMLAB_NODE_KUBELET_V ?? '')
  ? process.env.TERMLAB_NODE_KUBELET_V
  : '2';

const API = 'https://127.0.0.1:6443';
// containerd is built from Go modules (containerd.ts); runc stays Debian's.
const PACKAGES: Record<string, string> = {
  runc: 'runc',
  umoci: 'umoci',
  openssl: 'openssl',
  iptables: 'iptables',
  ldd: 'libc-bin',
};

function get(
  url: string,
  options: { ca?: string; token?: string; insecure?: boolean } = {},
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const send = url.startsWith('https:') ? request : httpRequest;
    const req = send(
      url,
      {
        ca: options.ca ? readFileSync(options.ca) : undefined,
        rejectUnauthorized: !options.insecure,
        headers: options.token ? { authorization: `Bearer ${options.token}` } : {},
        timeout: 3000,
      },
      (res) => {
        let body = '';
        res.on('data', (c) => {
          body += c;
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      },
    );
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', reject);
    req.end();
  });
}
const ok = async (url: string, options: Parameters<typeof get>[1] = {}) => (await get(url, options)).status === 200;

async function bringUp(kubeVersion: string, gates: FeatureGates): Promise<void> {
  const started = performance.now();
  const bin = binaries(kubeVersion);
  const running = upVersion();
  if (running && running !== kubeVersion)
    throw new StepError(`${running} is up; npm run cluster:down before bringing up ${kubeVersion}`);
  const runningGates = upGates();
  if (running && runningGates !== null && runningGates !== describeGates(gates))
    throw new StepError(
      `${running} is up with feature gates ${runningGates}; npm run cluster:down before bringing it up with ${describeGates(gates)}`,
    );
  console.log(`Kubernetes ${kubeVersion} (minor ${minorOf(kubeVersion)}), feature gates: ${describeGates(gates)}`);
  const gateArgs = featureGatesArgs(gates);
  const ctd = containerdBinaries();
  await step('preflight: Linux, root, shared mounts', () => {
    if (process.platform !== 'linux') throw new StepError('the CI node needs Linux');
    if (process.getuid?.() !== 0) throw new StepError('the CI node needs root');
    // The kubelet's mount propagation needs a shared root.
    sh('mount', ['--make-rshared', '/']);
    mkdirSync(STATE, { recursive: true });
    mkdirSync(RUN, { recursive: true });
    // The network namespaces that exist now are not ours; cluster:down removes only newer ones.
    const netns = existsSync('/var/run/netns') ? readdirSync('/var/run/netns') : [];
    writeFileSync(join(STATE, 'netns-before'), netns.join('\n'));
  });
  await step("system packages (Debian's)", () => {
    const missing = [
      ...new Set(
        Object.entries(PACKAGES)
          .filter(([bin]) => spawnSync('which', [bin]).status !== 0)
          .map(([, pkg]) => pkg),
      ),
    ];
    if (!existsSync('/usr/lib/cni/bridge')) missing.push('containernetworking-plugins');
    if (!missing.length) return;
    console.log(`  installing ${missing.join(' ')}`);
    sh('apt-get', ['update', '-qq']);
    sh('apt-get', ['install', '-y', '-qq', ...missing], { env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } });
  });
  await buildPrograms(kubeVersion);
  const edgeStarted = performance.now();
  const traefik = await step(`build the edge: Traefik ${TRAEFIK_VERSION} and its image`, () => {
    const built = buildTraefik();
    console.log(`  ${built}: ${traefikBinary()}`);
    return buildTraefikImage(traefikBinary(), TRAEFIK_IMAGE);
  });
  console.log(`edge_build_seconds: ${((performance.now() - edgeStarted) / 1000).toFixed(1)}`);
  writeFileSync(paths.upVersion, kubeVersion);
  writeFileSync(paths.upGates, describeGates(gates));
  const creds = await step('certificates, service-account key, tokens', () => ensureCredentials());
  await step('configuration: containerd, CNI bridge, kubelet, kube-proxy', () => {
    writeContainerdConfig(process.env.TERMLAB_NODE_SNAPSHOTTER ?? 'overlayfs');
    writeCniConfig();
    writeKubeletConfig(undefined, gates);
    writeKubeProxyConfig(join(STATE, 'kube-proxy.kubeconfig'), gates);
    const configs = {
      admin: [creds.tokens.admin, 'termlab-admin'],
      kubelet: [creds.tokens.kubelet, NODE_NAME],
      'controller-manager': [creds.tokens.controllerManager, 'controller-manager'],
      scheduler: [creds.tokens.scheduler, 'scheduler'],
      'kube-proxy': [creds.tokens.kubeProxy, 'system:kube-proxy'],
    } as const;
    for (const [name, [token, user]] of Object.entries(configs))
      writeFileSync(join(STATE, `${name}.kubeconfig`), kubeconfig(API, creds.ca, token, user), { mode: 0o600 });
    mkdirSync(dirname(paths.kubeconfig), { recursive: true });
    writeFileSync(paths.kubeconfig, kubeconfig(API, creds.ca, creds.tokens.admin, 'termlab-admin'), { mode: 0o600 });
  });

  await step(`bridge ${BRIDGE} with the node IP ${NODE_IP}`, () => {
    // Made before the kubelet so the node has a non-loopback IP from the start; the CNI bridge
    // plugin then finds it and uses it as the pods' gateway.
    if (spawnSync('ip', ['link', 'show', BRIDGE]).status !== 0) sh('ip', ['link', 'add', BRIDGE, 'type', 'bridge']);
    const prefix = POD_CIDR.split('/')[1];
    if (!sh('ip', ['-4', 'addr', 'show', 'dev', BRIDGE]).includes(`${NODE_IP}/`))
      sh('ip', ['addr', 'add', `${NODE_IP}/${prefix}`, 'dev', BRIDGE]);
    sh('ip', ['link', 'set', BRIDGE, 'up']);
  });
  await step('start etcd', async () => {
    const etcd = startComponent('etcd', bin.etcd, [
      '--name',
      NODE_NAME,
      '--data-dir',
      paths.etcdData,
      '--listen-client-urls',
      'http://127.0.0.1:2379',
      '--advertise-client-urls',
      'http://127.0.0.1:2379',
      '--listen-peer-urls',
      'http://127.0.0.1:2380',
      '--initial-advertise-peer-urls',
      'http://127.0.0.1:2380',
      '--initial-cluster',
      `${NODE_NAME}=http://127.0.0.1:2380`,
      '--listen-metrics-urls',
      'http://127.0.0.1:2381',
    ]);
    await waitUntil('etcd health', () => ok('http://127.0.0.1:2381/health'), 60_000, etcd);
  });
  await step('start kube-apiserver', async () => {
    const apiserver = startComponent('kube-apiserver', bin.kube, [
      'kube-apiserver',
      '--etcd-servers=http://127.0.0.1:2379',
      // On every address, advertised at the node IP: the kubernetes Service (10.96.0.1) then leads pods
      // to it over the bridge, as in a real cluster (the class's witness runs in a pod and reads the API).
      '--bind-address=0.0.0.0',
      '--secure-port=6443',
      `--advertise-address=${NODE_IP}`,
      `--tls-cert-file=${creds.serverCert}`,
      `--tls-private-key-file=${creds.serverKey}`,
      `--client-ca-file=${creds.ca}`,
      `--token-auth-file=${creds.tokensFile}`,
      '--authorization-mode=Node,RBAC',
      '--enable-admission-plugins=NodeRestriction',
      '--service-account-issuer=https://kubernetes.default.svc',
      `--service-account-key-file=${creds.saPub}`,
      `--service-account-signing-key-file=${creds.saKey}`,
      `--service-cluster-ip-range=${SERVICE_CIDR}`,
      '--allow-privileged=true',
      '--kubelet-preferred-address-types=InternalIP,Hostname',
      `--cert-dir=${join(STATE, 'apiserver-certs')}`,
      ...gateArgs,
    ]);
    await waitUntil(
      'kube-apiserver /readyz',
      () => ok(`${API}/readyz`, { ca: creds.ca, token: creds.tokens.admin }),
      120_000,
      apiserver,
    );
  });
  await step('start kube-controller-manager and kube-scheduler', async () => {
    const cm = startComponent('kube-controller-manager', bin.kube, [
      'kube-controller-manager',
      `--kubeconfig=${join(STATE, 'controller-manager.kubeconfig')}`,
      `--authentication-kubeconfig=${join(STATE, 'controller-manager.kubeconfig')}`,
      `--authorization-kubeconfig=${join(STATE, 'controller-manager.kubeconfig')}`,
      '--bind-address=127.0.0.1',
      '--leader-elect=false',
      `--service-account-private-key-file=${creds.saKey}`,
      `--root-ca-file=${creds.ca}`,
      // Each controller under its own service account, with the RBAC the API server bootstraps for it.
      '--use-service-account-credentials=true',
      ...gateArgs,
    ]);
    const scheduler = startComponent('kube-scheduler', bin.kube, [
      'kube-scheduler',
      `--kubeconfig=${join(STATE, 'scheduler.kubeconfig')}`,
      `--authentication-kubeconfig=${join(STATE, 'scheduler.kubeconfig')}`,
      `--authorization-kubeconfig=${join(STATE, 'scheduler.kubeconfig')}`,
      '--bind-address=127.0.0.1',
      '--leader-elect=false',
      ...gateArgs,
    ]);
    await waitUntil(
      'kube-controller-manager /healthz',
      () => ok('https://127.0.0.1:10257/healthz', { insecure: true }),
      60_000,
      cm,
    );
    await waitUntil(
      'kube-scheduler /healthz',
      () => ok('https://127.0.0.1:10259/healthz', { insecure: true }),
      60_000,
      scheduler,
    );
  });
  await step(`start containerd ${CONTAINERD_VERSION}`, async () => {
    // Its own shim first on PATH: containerd looks the shim up there before beside itself, and Debian's
    // containerd-shim-runc-v2 (1.6) may be installed.
    const containerd = startComponent('containerd', ctd.containerd, ['--config', paths.containerdConfig], {
      PATH: `${ctd.dir}:${process.env.PATH ?? ''}`,
    });
    await waitUntil(
      'containerd socket',
      () => spawnSync(ctd.ctr, ['--address', paths.containerdSocket, 'version']).status === 0,
      60_000,
      containerd,
    );
  });
  await step(`images: ${PAUSE_IMAGE}, ${LAB_IMAGE}, ${TRAEFIK_IMAGE}`, async () => {
    importImage(buildPauseImage(), 'pause');
    importImage(await buildLabImage(), 'lab-server');
    importImage(traefik.archive, 'traefik', TRAEFIK_IMAGE.replace(/:[^:/]+$/, ''));
    const listed = sh(ctd.ctr, ['--address', paths.containerdSocket, '-n', 'k8s.io', 'images', 'ls', '-q']);
    for (const image of [PAUSE_IMAGE, LAB_IMAGE, TRAEFIK_IMAGE])
      if (!listed.includes(image))
        throw new StepError(
          `${image} is not in containerd after the import (it has: ${listed.trim().split('\n').join(', ')})`,
        );
  });
  await step('start kubelet', async () => {
    const kubelet = startComponent('kubelet', bin.kube, [
      'kubelet',
      `--config=${paths.kubeletConfig}`,
      `--kubeconfig=${join(STATE, 'kubelet.kubeconfig')}`,
      `--hostname-override=${NODE_NAME}`,
      `--node-ip=${NODE_IP}`,
      `--root-dir=${paths.kubeletRoot}`,
      `--v=${KUBELET_VERBOSITY}`,
    ]);
    await waitUntil('kubelet /healthz', () => ok('http://127.0.0.1:10248/healthz'), 120_000, kubelet);
  });
  await step(`node ${NODE_NAME} Ready, default ServiceAccount present`, async () => {
    const opts = { ca: creds.ca, token: creds.tokens.admin };
    await waitUntil(
      'node Ready',
      async () => {
        const node = JSON.parse((await get(`${API}/api/v1/nodes/${NODE_NAME}`, opts)).body);
        const ready = node.status?.conditions?.some(
          (c: { type: string; status: string }) => c.type === 'Ready' && c.status === 'True',
        );
        // Schedulable only once the node lifecycle controller has lifted the not-ready taint.
        return (
          ready && !(node.spec?.taints ?? []).some((t: { key: string }) => t.key === 'node.kubernetes.io/not-ready')
        );
      },
      180_000,
      { pid: Number(readFileSync(join(paths.pids, 'kubelet.pid'), 'utf8')), log: join(paths.logs, 'kubelet.log') },
    );
    await waitUntil(
      'default ServiceAccount',
      () => ok(`${API}/api/v1/namespaces/default/serviceaccounts/default`, opts),
      60_000,
    );
  });
  await step('start kube-proxy (iptables)', async () => {
    // After the node is registered: kube-proxy reads its node IP from the Node object.
    const proxy = startComponent('kube-proxy', bin.kube, ['kube-proxy', `--config=${paths.kubeProxyConfig}`, '--v=2']);
    // /healthz answers 200 once the first full sync of the rules is done.
    await waitUntil('kube-proxy /healthz', () => ok('http://127.0.0.1:10256/healthz'), 60_000, proxy);
  });
  await step(`the edge: Gateway API CRDs, Traefik in ${EDGE_NAMESPACE}, Gateway Programmed`, async () => {
    const kc = new k8s.KubeConfig();
    kc.loadFromFile(paths.kubeconfig);
    kc.setCurrentContext(CONTEXT);
    await installEdge(kc);
  });
  const total = (performance.now() - started) / 1000;
  console.log(
    `\nnode ${kubeVersion} ready in ${total.toFixed(1)}s; kubeconfig ${paths.kubeconfig} (context ${CONTEXT}); the edge at http://${NODE_IP}:${EDGE_NODE_PORT}`,
  );
  for (const t of timings) console.log(`  ${t.seconds.toFixed(1).padStart(7)}s  ${t.step}`);
  console.log(`cluster_up_seconds: ${total.toFixed(1)}`);
}

const tool = {
  name: 'cluster:up',
  usage: 'npm run cluster:up -- [--kube vX.Y.Z] [--feature-gates Name=true,…]',
  // The components run detached, recorded by PID: what was started keeps running, for cluster:down to stop.
  onInterrupt: () =>
    console.error(
      `\ncluster:up: what was started keeps running; \`npm run cluster:down\` stops it (logs in ${paths.logs})`,
    ),
};

await runDevTool(tool, async () => {
  const { values } = devArgs(tool, { ...KUBE_FLAG, 'feature-gates': { type: 'string' } });
  const kubeVersion = requestedVersion(values.kube);
  const gates = parseFeatureGates(values['feature-gates']);
  try {
    await bringUp(kubeVersion, gates);
  } catch (error) {
    if (!isTermlabError(error)) throw error;
    throw new TermlabError(
      error.code,
      `${printedByStep(error) ? 'a step failed (above)' : error.message}; component logs are in ${paths.logs}. \`npm run cluster:down\` stops what was started.`,
      error.context,
      { cause: error },
    );
  }
});
