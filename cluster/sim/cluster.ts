// startSimCluster(): a simulated cluster in this process, on 127.0.0.1, reachable only through the
// kubeconfig it hands back. The harness never knows it is talking to a simulator.
import { chmod } from 'node:fs/promises';
import type { AddressInfo, Socket } from 'node:net';
import { dirname } from 'node:path';
import { stringify as toYaml } from 'yaml';
import { TermlabError } from '../../lib/errors.ts';
import { makeDirectory, writeFileAtomic } from '../../lib/files.ts';
import { createApiServer } from './api.ts';
import { createTokenGate, newToken } from './auth.ts';
import { ApiReachability, Faults, KubeletPause, ListenerFaults, type FaultRequest } from './faults.ts';
import { type FeatureGates, parseFeatureGates } from './feature-gates.ts';
import { Kubelet } from './kubelet.ts';
import { KubeletServer } from './kubelet-server.ts';
import { NODE_NAME, NodePorts } from './ports.ts';
import { Scheduler } from './scheduler.ts';
import { REAL_NODE_TIMING, type KubeletTiming } from './pleg.ts';
import { DeploymentController } from './deployment-controller.ts';
import { EndpointSliceController } from './endpointslice-controller.ts';
import { GarbageCollector } from './garbage-collector.ts';
import { ObjectRegistry } from './objects.ts';
import { PodRegistry } from './pods.ts';
import { ReplicaSetController } from './replicaset-controller.ts';
import { type ProxyOptions, type ProxyTruth, ServiceProxy } from './service-proxy.ts';
import { ServiceAllocator } from './services.ts';
import { createPortForwardServer } from './portforward.ts';
import { createRemoteCommandServer } from './remotecommand.ts';
import { defaultImages, labServerBundle, type ImageMap } from './runtime.ts';
import { Store } from './store.ts';
import { addEdgeImage, installEdge, type SimEdge } from './edge-install.ts';
import { selfSignedCertificate } from './tls.ts';
import { apiTime } from './time.ts';
import { GroundTruth, recordPublications, type TruthRecord } from './truth.ts';
import { simMinor, versionInfo } from './versions.ts';
import { WatchServer } from './watch.ts';

const SIM_CONTEXT = 'termlab-sim';

export interface SimOptions {
  port?: number;
  images?: ImageMap;
  /** The Kubernetes minor to emulate (versions.ts): 1.37 by default. */
  kubeVersion?: string;
  /** `--feature-gates` as the kubelet and API server take it (Name=bool,...): that minor's defaults otherwise. */
  featureGates?: string;
  /** The kubelet's relist timing (pleg.ts); the real node's by default. */
  kubelet?: Partial<KubeletTiming>;
  /** The service proxy: kube-proxy's bounded-frequency syncs (minSyncPeriodMs, syncDurationMs), or a fixed syncDelayMs. */
  proxy?: ProxyOptions;
  /** Install the edge (manifests/edge/traefik.yaml: Traefik, its Gateway and IngressClass) and wait for it Ready. */
  edge?: boolean;
}

export interface SimCluster {
  server: string;
  context: string;
  /** The emulated release (gitVersion), as /version reports it. */
  kubeVersion: string;
  /** The gates in force (feature-gates.ts): the minor's defaults and what --feature-gates set. */
  featureGates: FeatureGates;
  /** A kubeconfig document (YAML) whose current context is termlab-sim; it holds the only token this sim accepts. */
  kubeconfig: string;
  truth(uid: string): TruthRecord | undefined;
  /** What the service proxy did for a Service: every connection and every change of its view. */
  proxyTruth(namespace: string, service: string): Promise<ProxyTruth | undefined>;
  fault(request: FaultRequest): string;
  /** Emits 'released' when a stall-requests fault ends, just before the held connections flow again. */
  faultEvents: ListenerFaults;
  /** Emits 'paused' and 'resumed' around a pause-kubelet fault. */
  kubeletPause: KubeletPause;
  /** The edge, when started with `edge: true`. */
  edge: SimEdge | null;
  stop(): Promise<void>;
}

/**
 * The simulated kubelet sends real POSIX signals to real processes (the subject of the lab);
 * native Windows has neither, so the sim refuses it in one line (exit 2) and names WSL2.
 */
function assertPosixHost(platform: NodeJS.Platform = process.platform): void {
  if (platform === 'win32') {
    throw new TermlabError(
      'PLATFORM_UNSUPPORTED',
      'the simulated cluster needs WSL2 on Windows: it sends POSIX signals (SIGTERM, SIGKILL) to real processes; run termlab inside WSL2, or against a real cluster with --context',
    );
  }
}

function renderKubeconfig(server: string, token: string, ca: string): string {
  return toYaml({
    apiVersion: 'v1',
    kind: 'Config',
    preferences: {},
    clusters: [
      { name: SIM_CONTEXT, cluster: { server, 'certificate-authority-data': Buffer.from(ca).toString('base64') } },
    ],
    users: [{ name: SIM_CONTEXT, user: { token } }],
    contexts: [{ name: SIM_CONTEXT, context: { cluster: SIM_CONTEXT, user: SIM_CONTEXT, namespace: 'default' } }],
    'current-context': SIM_CONTEXT,
  });
}

const PRIVATE_FILE_MODE = 0o600;
const PRIVATE_FOLDER_MODE = 0o700;

/**
 * Writes a kubeconfig readable by its owner only: the file is created 0600 (never wider, not even
 * for a moment) and renamed into place; a missing folder is created 0700, and `ownFolder` says the
 * folder is ours to tighten to 0700 even when it exists.
 */
export async function writeKubeconfigFile(path: string, text: string, ownFolder: boolean): Promise<void> {
  const folder = dirname(path);
  await makeDirectory(folder, PRIVATE_FOLDER_MODE);
  if (ownFolder) await chmod(folder, PRIVATE_FOLDER_MODE);
  await writeFileAtomic(path, text, PRIVATE_FILE_MODE);
}

export async function startSimCluster(options: SimOptions = {}): Promise<SimCluster> {
  assertPosixHost();
  const { minor, behaviour } = simMinor(options.kubeVersion);
  // One flag for the API server and the kubelet alike; refused before anything starts.
  const gates = parseFeatureGates(options.featureGates, minor);
  const store = new Store();
  const faults = new Faults();
  const truth = new GroundTruth();
  const stopRecording = recordPublications(store, truth);
  const images = options.images ?? defaultImages(await labServerBundle());
  const version = versionInfo(minor, behaviour);
  const ports = new NodePorts();
  const scheduler = new Scheduler(store, images, ports);
  // The API as the kubelet's own client meets it, and the kubelet's SIGSTOP: both are faults.
  const reach = new ApiReachability();
  const pause = new KubeletPause();
  const kubelet = new Kubelet(
    store,
    images,
    ports,
    truth,
    faults,
    { ...REAL_NODE_TIMING, ...options.kubelet },
    behaviour,
    reach,
    pause,
    gates,
  );
  const kubeletServer = new KubeletServer((uid) => kubelet.served(uid), pause, behaviour.logReaderCheckMs);
  const registry = new PodRegistry(store, faults, gates);
  const proxy = new ServiceProxy(store, (uid, port) => kubeletServer.portTarget(uid, port), options.proxy);
  const objects = new ObjectRegistry(store, registry, new ServiceAllocator(proxy));
  const controllers = [
    new ReplicaSetController(store, registry),
    new DeploymentController(store, objects),
    new EndpointSliceController(store, objects),
    new GarbageCollector(store, objects, registry),
  ];
  const watches = new WatchServer(store, faults);
  const portForward = createPortForwardServer();
  const remoteCommand = createRemoteCommandServer();
  const now = apiTime();
  for (const name of ['default', 'kube-system', 'kube-public']) {
    store.create('namespaces', {
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name, uid: crypto.randomUUID(), resourceVersion: '', creationTimestamp: now },
      spec: { finalizers: ['kubernetes'] },
      status: { phase: 'Active' },
    });
  }
  store.create('nodes', {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: {
      name: NODE_NAME,
      uid: crypto.randomUUID(),
      resourceVersion: '',
      creationTimestamp: now,
      labels: { 'kubernetes.io/hostname': NODE_NAME, 'kubernetes.io/os': 'linux' },
    },
    spec: {},
    status: {
      conditions: [
        {
          type: 'Ready',
          status: 'True',
          reason: 'KubeletReady',
          message: 'the simulated kubelet is posting ready status',
          lastHeartbeatTime: now,
          lastTransitionTime: now,
        },
      ],
      addresses: [
        { type: 'InternalIP', address: '127.0.0.1' },
        { type: 'Hostname', address: NODE_NAME },
      ],
      nodeInfo: {
        kubeletVersion: version.gitVersion,
        containerRuntimeVersion: 'termlab-sim://0.1.0',
        operatingSystem: 'linux',
        architecture: process.arch,
        osImage: 'termlab simulated node',
        kernelVersion: '',
        machineID: '',
        systemUUID: '',
        bootID: '',
        kubeProxyVersion: '',
      },
    },
  });

  let listenerFaults: ListenerFaults | null = null;
  const applyFault = (request: FaultRequest, via?: Socket): string => {
    switch (request.fault) {
      case 'drop-watches':
        return `dropped ${watches.dropAll()} watch connection(s)`;
      case 'expire-next-watch':
        faults.expireNextWatch = true;
        return 'the next watch gets 410 Expired';
      case 'delay-events':
        store.eventDelayMs = request.ms;
        return `watch events delayed by ${request.ms} ms`;
      case 'fail-next-delete':
        faults.failNextDelete.add(Faults.key(request.namespace, request.name));
        return `the next delete of ${request.namespace}/${request.name} fails with 500`;
      case 'lose-next-create-answer':
        faults.loseNextCreateAnswer.add(request.namespace);
        return `the next pod create in ${request.namespace} is applied, and its answer lost once the pod is Ready`;
      case 'ignore-sigterm':
        faults.ignoreSigterm.add(Faults.key(request.namespace, request.name));
        return `${request.namespace}/${request.name} will not get SIGTERM`;
      case 'refuse-connections':
        return listenerFaults!.refuse(request.seconds);
      case 'stall-requests':
        return listenerFaults!.stall(request.seconds, via);
      case 'reset-port-forwards':
        return `reset ${portForward.resetAll()} port-forward stream(s)`;
      case 'pause-kubelet':
        return pause.pause(request.seconds);
    }
  };

  const token = newToken();
  const tls = await selfSignedCertificate();
  const http = createApiServer(
    {
      store,
      registry,
      objects,
      proxy,
      kubelet: kubeletServer,
      watches,
      truth,
      portForward,
      remoteCommand,
      version,
      applyFault,
      refuseUnauthorized: createTokenGate(token),
    },
    tls,
  );
  await new Promise<void>((resolve, reject) => {
    http.once('error', reject);
    http.listen(options.port ?? 0, '127.0.0.1', () => resolve());
  });
  const port = (http.address() as AddressInfo).port;
  listenerFaults = new ListenerFaults(http, '127.0.0.1', port, reach);
  const server = `https://127.0.0.1:${port}`;
  let stopped: Promise<void> | null = null;
  let edge: SimEdge | null = null;
  const sim: SimCluster = {
    server,
    context: SIM_CONTEXT,
    kubeVersion: version.gitVersion,
    featureGates: gates,
    kubeconfig: renderKubeconfig(server, token, tls.cert),
    truth: (uid) => truth.get(uid),
    proxyTruth: (namespace, service) => proxy.truth(namespace, service),
    fault: (request) => applyFault(request),
    faultEvents: listenerFaults,
    kubeletPause: pause,
    get edge() {
      return edge;
    },
    stop() {
      stopped ??= (async () => {
        listenerFaults?.clear();
        for (const c of controllers) c.stop();
        scheduler.stop();
        stopRecording();
        await proxy.stop();
        watches.closeAll();
        portForward.close();
        remoteCommand.close();
        await kubelet.shutdown();
        ports.forgetAll();
        http.closeAllConnections();
        // The listener may be closed already (a refuse-connections fault): that is stopped too.
        await new Promise<void>((resolve) => http.close(() => resolve()));
      })();
      return stopped;
    },
  };
  if (options.edge) {
    try {
      await addEdgeImage(images, port, token, tls.cert);
      edge = await installEdge(store, server, token, tls.cert);
    } catch (error) {
      await sim.stop();
      throw new TermlabError(
        'SIM_EDGE_NOT_READY',
        `the simulated cluster's edge: ${error instanceof Error ? error.message : String(error)}`,
      );
    }
  }
  return sim;
}
