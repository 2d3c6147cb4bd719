// A rollout's objects from the lab pod template (manifests/lab-pod.yaml): a Deployment of the lab
// server, a NodePort Service in front of it, and the load pod (the same image, LAB_MODE=load).
// Only the fields the scenario is about change; everything carries the run's ownership labels.
import { IDENTITY_ANNOTATION } from '../safety/identity.ts';
import { ENV_LABEL, ownershipLabels, RUN_LABEL, SCENARIO_LABEL } from '../safety/labels.ts';
import { EXPIRES_ANNOTATION } from '../safety/reap-workloads.ts';
import { configureLabContainer } from '../../server/contract-schemas.ts';
import { LAB_LOAD_MODE, LAB_MODE_ENV } from '../../server/contract.ts';
import { type RolloutScenario, type RolloutTemplate, rolloutDeadlineSeconds } from './rollout.ts';

/** Tells the Deployment's pods apart from the load pod, which carries the same run labels. */
export const ROLE_LABEL = 'termlab.io/role';
/** The Service's port: what a client inside the cluster connects to at the ClusterIP. */
export const SERVICE_PORT = 80;
/** A template change always changes this annotation too, so even an identical lifecycle rolls out. */
const REVISION_ANNOTATION = 'termlab.io/template';

export interface RolloutRenderOptions {
  name: string;
  /** When the reaper may take the Deployment and Service without a record of the run (ms since the epoch). */
  expiresAt?: number;
  owner: string;
  /** The caller's full name as the cluster reported it: every pod's termlab.io/identity annotation. */
  identity?: string;
  runId: string;
  image?: string;
  env?: string;
}

const identityOf = (o: RolloutRenderOptions) => (o.identity ? { [IDENTITY_ANNOTATION]: o.identity } : {});

function labels(scenario: RolloutScenario, o: RolloutRenderOptions, role: 'lab' | 'load'): Record<string, string> {
  return {
    ...ownershipLabels(o.owner, o.runId, scenario.name),
    ...(o.env ? { [ENV_LABEL]: o.env } : {}),
    [ROLE_LABEL]: role,
  };
}

const expiry = (o: RolloutRenderOptions) =>
  o.expiresAt ? { annotations: { [EXPIRES_ANNOTATION]: new Date(o.expiresAt).toISOString() } } : {};

/** The Deployment's selector: this scenario's lab pods of this run, and nothing else. */
export function labSelector(scenario: RolloutScenario, o: RolloutRenderOptions): Record<string, string> {
  const all = labels(scenario, o, 'lab');
  return { [RUN_LABEL]: all[RUN_LABEL]!, [SCENARIO_LABEL]: all[SCENARIO_LABEL]!, [ROLE_LABEL]: 'lab' };
}

/** The pod template of one version: the lab pod's spec with this version's mode and hook. */
export function renderPodTemplate(
  template: Record<string, any>,
  scenario: RolloutScenario,
  version: RolloutTemplate,
  which: 'from' | 'to',
  o: RolloutRenderOptions,
): Record<string, any> {
  const pod = structuredClone(template) as any;
  const spec = pod.spec;
  // A ReplicaSet's pods restart and may not carry a deadline (the API refuses both otherwise).
  spec.restartPolicy = 'Always';
  delete spec.activeDeadlineSeconds;
  spec.terminationGracePeriodSeconds = scenario.terminationGracePeriodSeconds;
  configureLabContainer(spec.containers[0], { image: o.image, mode: version.mode, preStop: version.preStop });
  return {
    metadata: {
      labels: { ...pod.metadata?.labels, ...labels(scenario, o, 'lab') },
      annotations: { [REVISION_ANNOTATION]: which, ...identityOf(o) },
    },
    spec,
  };
}

export function renderDeployment(
  template: Record<string, any>,
  scenario: RolloutScenario,
  o: RolloutRenderOptions,
): Record<string, any> {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: o.name, labels: labels(scenario, o, 'lab'), ...expiry(o) },
    spec: {
      replicas: scenario.replicas,
      selector: { matchLabels: labSelector(scenario, o) },
      strategy: {
        type: 'RollingUpdate',
        rollingUpdate: { maxSurge: scenario.maxSurge, maxUnavailable: scenario.maxUnavailable },
      },
      template: renderPodTemplate(template, scenario, scenario.from, 'from', o),
    },
  };
}

export function renderService(
  template: Record<string, any>,
  scenario: RolloutScenario,
  o: RolloutRenderOptions,
): Record<string, any> {
  const port = template.spec.containers[0].ports[0];
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: o.name, labels: labels(scenario, o, 'lab'), ...expiry(o) },
    spec: {
      // NodePort everywhere: on the simulated cluster hostIP:nodePort is the way in (contract S.2).
      type: 'NodePort',
      selector: labSelector(scenario, o),
      ports: [{ name: 'http', port: SERVICE_PORT, targetPort: port.name ?? port.containerPort, protocol: 'TCP' }],
    },
  };
}

export function renderLoadPod(
  template: Record<string, any>,
  scenario: RolloutScenario,
  o: RolloutRenderOptions & { target: string },
): Record<string, any> {
  const pod = structuredClone(template) as any;
  pod.metadata = {
    name: `${o.name}-load`,
    labels: { ...pod.metadata?.labels, ...labels(scenario, o, 'load') },
    ...(o.identity ? { annotations: identityOf(o) } : {}),
  };
  pod.spec.restartPolicy = 'Never';
  pod.spec.activeDeadlineSeconds = rolloutDeadlineSeconds(scenario);
  const container = pod.spec.containers[0];
  if (o.image) container.image = o.image;
  // A client, not a server: no port, no probe, no hook.
  delete container.ports;
  delete container.readinessProbe;
  delete container.livenessProbe;
  delete container.lifecycle;
  const load = scenario.load;
  container.env = [
    ...(container.env ?? []).filter((e: any) => e.name !== LAB_MODE_ENV),
    { name: LAB_MODE_ENV, value: LAB_LOAD_MODE },
    { name: 'LOAD_TARGET', value: o.target },
    { name: 'LOAD_RATE', value: String(load.rate) },
    { name: 'LOAD_WORK_MS', value: String(load.workMs) },
    { name: 'LOAD_DURATION_MS', value: String(load.durationMs) },
    { name: 'LOAD_CONNECTIONS', value: String(load.connections) },
  ];
  return pod;
}
