// A retry scenario's other objects (issue 27), from the same lab pod template: the standby replica
// (the scenario's pod again, under its own name), the Service both lab pods stand behind (the retries
// are routed by its EndpointSlices), the ledger pod (LAB_MODE=ledger) and the NodePort Service the lab
// pods reach the ledger through. Each carries the run's ownership labels
// and termlab.io/role, and the scenario's deadline; none holds a finalizer: their end is not graded.
import type { V1Pod } from '@kubernetes/client-node';
import { LAB_LEDGER_MODE, LAB_MODE_ENV } from '../../server/contract.ts';
import { podDeadlineSeconds } from '../safety/deadline.ts';
import { HOLD_FINALIZER, RUN_LABEL, SCENARIO_LABEL } from '../safety/labels.ts';
import { EXPIRES_ANNOTATION } from '../safety/reap-workloads.ts';
import { renderPod, type RenderOptions } from './render.ts';
import { ROLE_LABEL, SERVICE_PORT } from './render-rollout.ts';
import type { Scenario } from './schema.ts';

const RETRY_ROLES = { deleted: 'lab', standby: 'standby', ledger: 'ledger', service: 'retry' } as const;
/** On both lab pods of a retry scenario (the deleted one and the standby): the retry Service's selector. */
export const RETRY_SERVICE_LABEL = 'termlab.io/retry-service';

/** The retry Service's name: the scenario's pod name and a suffix, as the side pods'. */
export const retryServiceName = (podName: string): string => `${podName}-svc`;

/** A lab pod of a retry scenario (the deleted one, the standby) joins the retry Service; any other pod is left as it is. */
export function withRetryService(pod: V1Pod, scenario: Scenario, podName: string): V1Pod {
  if (scenario.retry)
    pod.metadata!.labels = { ...pod.metadata!.labels, [RETRY_SERVICE_LABEL]: retryServiceName(podName) };
  return pod;
}

function sidePodName(podName: string, role: 'standby' | 'ledger'): string {
  return `${podName}-${role === 'standby' ? 'b' : 'ledger'}`;
}

function withoutHold(pod: V1Pod, role: string): V1Pod {
  pod.metadata!.finalizers = (pod.metadata!.finalizers ?? []).filter((f) => f !== HOLD_FINALIZER);
  if (!pod.metadata!.finalizers.length) delete pod.metadata!.finalizers;
  pod.metadata!.labels = { ...pod.metadata!.labels, [ROLE_LABEL]: role };
  return pod;
}

/** The standby replica: the scenario's own pod (mode, hook, grace, effect), the retry's target. */
export function renderStandby(template: Record<string, any>, scenario: Scenario, options: RenderOptions): V1Pod {
  return withRetryService(
    withoutHold(
      renderPod(template, scenario, { ...options, podName: sidePodName(options.podName, 'standby') }),
      RETRY_ROLES.standby,
    ),
    scenario,
    options.podName,
  );
}

/** The ledger: the lab image in ledger mode, no hook, its readiness the ledger's own /readyz. */
export function renderLedger(template: Record<string, any>, scenario: Scenario, options: RenderOptions): V1Pod {
  const pod = withoutHold(
    renderPod(
      template,
      { ...scenario, preStop: { kind: 'none' }, effect: 'none', memoryLimitMiB: undefined, termAllocateMiB: undefined },
      { ...options, podName: sidePodName(options.podName, 'ledger'), ledgerUrl: undefined },
    ),
    RETRY_ROLES.ledger,
  );
  const container = pod.spec!.containers[0]!;
  container.env = (container.env ?? []).map((e) =>
    e.name === LAB_MODE_ENV ? { name: LAB_MODE_ENV, value: LAB_LEDGER_MODE } : e,
  );
  pod.spec!.activeDeadlineSeconds = podDeadlineSeconds(scenario);
  return pod;
}

/** Past a scenario's pods' own deadline its Services serve nothing: the class-wide reaper may take them then. */
const expiry = (scenario: Scenario, now: number) => ({
  [EXPIRES_ANNOTATION]: new Date(now + podDeadlineSeconds(scenario) * 1000).toISOString(),
});

/** The ledger's Service: NodePort, as the rollout lab's (on the simulated cluster hostIP:nodePort is the way in). */
export function renderLedgerService(
  template: Record<string, any>,
  scenario: Scenario,
  ledger: V1Pod,
  now = Date.now(),
): Record<string, any> {
  const port = template.spec.containers[0].ports[0];
  const labels = ledger.metadata!.labels!;
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: ledger.metadata!.name, labels, annotations: expiry(scenario, now) },
    spec: {
      type: 'NodePort',
      selector: {
        [RUN_LABEL]: labels[RUN_LABEL]!,
        [SCENARIO_LABEL]: labels[SCENARIO_LABEL]!,
        [ROLE_LABEL]: RETRY_ROLES.ledger,
      },
      ports: [{ name: 'http', port: SERVICE_PORT, targetPort: port.name ?? port.containerPort, protocol: 'TCP' }],
    },
  };
}

/** The Service both lab pods stand behind: ClusterIP, the lab's port; its EndpointSlices route each retry. */
export function renderRetryService(
  template: Record<string, any>,
  scenario: Scenario,
  labPod: V1Pod,
  now = Date.now(),
): Record<string, any> {
  const port = template.spec.containers[0].ports[0];
  const labels = labPod.metadata!.labels!;
  const name = labels[RETRY_SERVICE_LABEL]!;
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name, labels: { ...labels, [ROLE_LABEL]: RETRY_ROLES.service }, annotations: expiry(scenario, now) },
    spec: {
      selector: {
        [RUN_LABEL]: labels[RUN_LABEL]!,
        [SCENARIO_LABEL]: labels[SCENARIO_LABEL]!,
        [RETRY_SERVICE_LABEL]: name,
      },
      ports: [{ name: 'http', port: SERVICE_PORT, targetPort: port.name ?? port.containerPort, protocol: 'TCP' }],
    },
  };
}
