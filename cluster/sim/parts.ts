import type { Socket } from 'node:net';
import type { createTokenGate } from './auth.ts';
import type { FaultRequest } from './faults.ts';
import type { KubeletServer } from './kubelet-server.ts';
import type { ObjectRegistry } from './objects.ts';
import type { PodRegistry } from './pods.ts';
import type { createPortForwardServer } from './portforward.ts';
import type { createRemoteCommandServer } from './remotecommand.ts';
import type { ServiceProxy } from './service-proxy.ts';
import type { Store } from './store.ts';
import type { GroundTruth } from './truth.ts';
import type { VersionInfo } from './versions.ts';
import type { WatchServer } from './watch.ts';

/** The pieces of one simulated cluster, wired together in index.ts. */
export interface SimParts {
  store: Store;
  registry: PodRegistry;
  /** Deployments, ReplicaSets, Services (EndpointSlices are the controller's). */
  objects: ObjectRegistry;
  proxy: ServiceProxy;
  /** The kubelet as the API server reaches it: logs, exec, port-forward. */
  kubelet: KubeletServer;
  watches: WatchServer;
  truth: GroundTruth;
  portForward: ReturnType<typeof createPortForwardServer>;
  remoteCommand: ReturnType<typeof createRemoteCommandServer>;
  /** /version: the emulated release. */
  version: VersionInfo;
  /** `via`: the connection that asked (the admin endpoint), which a stall spares so it gets its answer. */
  applyFault(request: FaultRequest, via?: Socket): string;
  /** Called first for every request and upgrade: true when it refused it (401). */
  refuseUnauthorized: ReturnType<typeof createTokenGate>;
}
