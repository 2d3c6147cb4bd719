// startSimCluster(): a simulated cluster in this process, on 127.0.0.1, reachable only through the
// kubeconfig it hands back. The harness never knows it is talking to a simulator.
import type { AddressInfo } from 'node:net';
import { stringify as toYaml } from 'yaml';
import { TermlabError } from '../../harness/errors.ts';
import { createApiServer } from './api.ts';
import { Faults, type FaultRequest } from './faults.ts';
import { Kubelet, NODE_NAME } from './kubelet.ts';
import { REAL_NODE_TIMING, type KubeletTiming } from './pleg.ts';
import { PodRegistry } from './pods.ts';
import { createPortForwardServer } from './portforward.ts';
import { defaultImages, labServerBundle, type ImageMap } from './runtime.ts';
import { Store } from './store.ts';
import { apiTime } from './time.ts';
import { GroundTruth, type TruthRecord } from './truth.ts';
import { VERSION } from './discovery.ts';
import { WatchServer } from './watch.ts';

export const SIM_CONTEXT = 'termlab-sim';

export interface SimOptions {
  port?: number;
  images?: ImageMap;
  /** The kubelet's relist timing (pleg.ts); the real node's by default. */
  kubelet?: Partial<KubeletTiming>;
}

export interface SimCluster {
  server: string;
  context: string;
  /** A kubeconfig document (YAML) whose current context is termlab-sim. */
  kubeconfig: string;
  truth(uid: string): TruthRecord | undefined;
  fault(request: FaultRequest): string;
  stop(): Promise<void>;
}

/**
 * The simulated kubelet sends real POSIX signals to real processes (the subject of the lab);
 * native Windows has neither, so the sim refuses it in one line (exit 2) and names WSL2.
 */
export function assertPosixHost(platform: NodeJS.Platform = process.platform): void {
  if (platform === 'win32') {
    throw new TermlabError('PLATFORM_UNSUPPORTED', 'the simulated cluster needs WSL2 on Windows: it sends POSIX signals (SIGTERM, SIGKILL) to real processes; run termlab inside WSL2, or against a real cluster with --context');
  }
}

export function renderKubeconfig(server: string): string {
  return toYaml({
    apiVersion: 'v1', kind: 'Config', preferences: {},
    // client-node accepts plain HTTP only with this flag set; the sim listens on loopback only.
    clusters: [{ name: SIM_CONTEXT, cluster: { server, 'insecure-skip-tls-verify': true } }],
    users: [{ name: SIM_CONTEXT, user: { token: 'termlab-sim' } }],
    contexts: [{ name: SIM_CONTEXT, context: { cluster: SIM_CONTEXT, user: SIM_CONTEXT, namespace: 'default' } }],
    'current-context': SIM_CONTEXT,
  });
}

export async function startSimCluster(options: SimOptions = {}): Promise<SimCluster> {
  assertPosixHost();
  const store = new Store();
  const faults = new Faults();
  const truth = new GroundTruth();
  const images = options.images ?? defaultImages(await labServerBundle());
  const kubelet = new Kubelet(store, images, truth, faults, { ...REAL_NODE_TIMING, ...options.kubelet });
  const registry = new PodRegistry(store, kubelet, faults);
  const watches = new WatchServer(store, faults);
  const portForward = createPortForwardServer();
  const now = apiTime();
  for (const name of ['default', 'kube-system', 'kube-public']) {
    store.create('namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name, uid: crypto.randomUUID(), resourceVersion: '', creationTimestamp: now }, spec: { finalizers: ['kubernetes'] }, status: { phase: 'Active' } });
  }
  store.create('nodes', {
    apiVersion: 'v1', kind: 'Node',
    metadata: { name: NODE_NAME, uid: crypto.randomUUID(), resourceVersion: '', creationTimestamp: now, labels: { 'kubernetes.io/hostname': NODE_NAME, 'kubernetes.io/os': 'linux' } },
    spec: {},
    status: {
      conditions: [{ type: 'Ready', status: 'True', reason: 'KubeletReady', message: 'the simulated kubelet is posting ready status', lastHeartbeatTime: now, lastTransitionTime: now }],
      addresses: [{ type: 'InternalIP', address: '127.0.0.1' }, { type: 'Hostname', address: NODE_NAME }],
      nodeInfo: { kubeletVersion: VERSION.gitVersion, containerRuntimeVersion: 'termlab-sim://0.1.0', operatingSystem: 'linux', architecture: process.arch, osImage: 'termlab simulated node', kernelVersion: '', machineID: '', systemUUID: '', bootID: '', kubeProxyVersion: '' },
    },
  });

  const applyFault = (request: FaultRequest): string => {
    switch (request.fault) {
      case 'drop-watches': return `dropped ${watches.dropAll()} watch connection(s)`;
      case 'expire-next-watch': faults.expireNextWatch = true; return 'the next watch gets 410 Expired';
      case 'delay-events': store.eventDelayMs = request.ms; return `watch events delayed by ${request.ms} ms`;
      case 'fail-next-delete': faults.failNextDelete.add(Faults.key(request.namespace, request.name)); return `the next delete of ${request.namespace}/${request.name} fails with 500`;
      case 'ignore-sigterm': faults.ignoreSigterm.add(Faults.key(request.namespace, request.name)); return `${request.namespace}/${request.name} will not get SIGTERM`;
    }
  };

  const http = createApiServer({ store, registry, kubelet, watches, truth, portForward, applyFault });
  await new Promise<void>((resolve, reject) => {
    http.once('error', reject);
    http.listen(options.port ?? 0, '127.0.0.1', () => resolve());
  });
  const server = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
  let stopped: Promise<void> | null = null;
  return {
    server,
    context: SIM_CONTEXT,
    kubeconfig: renderKubeconfig(server),
    truth: (uid) => truth.get(uid),
    fault: applyFault,
    stop() {
      stopped ??= (async () => {
        watches.closeAll();
        portForward.close();
        await kubelet.shutdown();
        http.closeAllConnections();
        await new Promise<void>((resolve) => http.close(() => resolve()));
      })();
      return stopped;
    },
  };
}
export { simCommand } from './command.ts';
