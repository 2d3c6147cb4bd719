// The core/v1 Pod fields the scheduler, the kubelet and its status manager read and write. The store
// keeps the API's JSON as it came; these are the shapes those parts rely on.
import type { ContainerPort } from './runtime.ts';

export interface EnvVar {
  name: string;
  value?: string;
  valueFrom?: { fieldRef?: { fieldPath: string } };
}
export interface PodPort extends ContainerPort {
  hostPort?: number;
  protocol?: string;
}

/** The core/v1 Probe fields the prober reads. */
export interface ReadinessProbe {
  httpGet?: { port: number | string; path?: string };
  periodSeconds?: number;
  failureThreshold?: number;
  successThreshold?: number;
  initialDelaySeconds?: number;
  timeoutSeconds?: number;
}

/** core/v1 LifecycleHandler: the fields the kubelet's lifecycle/handlers.go reads. */
export interface LifecycleHandler {
  exec?: { command?: string[] };
  httpGet?: { port: number | string; path?: string; host?: string };
  sleep?: { seconds?: number };
  tcpSocket?: unknown;
}
export interface Lifecycle {
  preStop?: LifecycleHandler;
  postStart?: LifecycleHandler;
  /** KEP-4960, gate ContainerStopSignals: the signal the runtime stops the container with. */
  stopSignal?: string;
}

export interface ContainerSpec {
  name: string;
  image: string;
  command?: string[];
  args?: string[];
  env?: EnvVar[];
  ports?: PodPort[];
  /** Read by the prober (prober.ts); only httpGet probes are run. */
  readinessProbe?: ReadinessProbe;
  /** An init container's own policy: Always makes it a native sidecar (termination-order.ts). */
  restartPolicy?: string;
  /** Gates the next init container's start while it has not succeeded (only httpGet, as readiness). */
  startupProbe?: ReadinessProbe;
  /** Read by the kill sequence (kill.ts). */
  lifecycle?: Lifecycle;
  resources?: { limits?: { memory?: unknown } };
}

export interface PodSpec {
  containers: ContainerSpec[];
  /** The sim runs only restartable ones (restartPolicy: Always); pods.ts refuses the others. */
  initContainers?: ContainerSpec[];
  nodeName?: string;
  dnsPolicy?: string;
  activeDeadlineSeconds?: number;
  terminationGracePeriodSeconds?: number;
}

export interface PodCondition {
  type: string;
  status: 'True' | 'False';
  lastTransitionTime: string;
  reason?: string;
}

export interface ContainerState {
  waiting?: { reason: string; message?: string };
  running?: { startedAt: string };
  terminated?: { exitCode: number; reason: string; startedAt: string; finishedAt: string; containerID: string };
}

export interface ContainerStatus {
  name: string;
  image: string;
  imageID: string;
  containerID?: string;
  ready: boolean;
  restartCount: number;
  started: boolean;
  state: ContainerState;
}

export interface PodStatus {
  phase?: string;
  reason?: string;
  message?: string;
  qosClass?: string;
  startTime?: string;
  hostIP?: string;
  hostIPs?: { ip: string }[];
  podIP?: string;
  podIPs?: { ip: string }[];
  conditions?: PodCondition[];
  containerStatuses?: ContainerStatus[];
  initContainerStatuses?: ContainerStatus[];
}

/** The pod a kubelet part acts for: the object it reads afresh is this one only while the UID matches. */
export interface PodRef {
  uid: string;
  namespace: string;
  name: string;
}
