// A retry scenario's other objects (issue 27), from the same lab pod template: the standby replica a
// retry lands on (the scenario's pod again, under its own name), the ledger pod (LAB_MODE=ledger) and
// the NodePort Service the lab pods reach the ledger through. Each carries the run's ownership labels
// and termlab.io/role, and the scenario's deadline; none holds a finalizer: their end is not graded.
import type { V1Pod } from '@kubernetes/client-node';
import { LAB_LEDGER_MODE, LAB_MODE_ENV } from '../../server/contract.ts';
import { podDeadlineSeconds } from '../safety/deadline.ts';
import { HOLD_FINALIZER, RUN_LABEL, SCENARIO_LABEL } from '../safety/labels.ts';
import { renderPod, type RenderOptions } from './render.ts';
import { ROLE_LABEL, SERVICE_PORT } from './render-rollout.ts';
import type { Scenario } from './schema.ts';

const RETRY_ROLES = { deleted: 'lab', standby: 'standby', ledger: 'ledger' } as const;

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
  return withoutHold(renderPod(template, scenario, { ...options, podName: sidePodName(options.podName, 'standby') }), RETRY_ROLES.standby);
}

/** The ledger: the lab image in ledger mode, no hook, its readiness the ledger's own /readyz. */
export function renderLedger(template: Record<string, any>, scenario: Scenario, options: RenderOptions): V1Pod {
  const pod = withoutHold(renderPod(template, { ...scenario, preStop: { kind: 'none' }, effect: 'none', memoryLimitMiB: undefined, termAllocateMiB: undefined }, { ...options, podName: sidePodName(options.podName, 'ledger'), ledgerUrl: undefined }), RETRY_ROLES.ledger);
  const container = pod.spec!.containers[0]!;
  container.env = (container.env ?? []).map((e) => (e.name === LAB_MODE_ENV ? { name: LAB_MODE_ENV, value: LAB_LEDGER_MODE } : e));
  pod.spec!.activeDeadlineSeconds = podDeadlineSeconds(scenario);
  return pod;
}

/** The ledger's Service: NodePort, as the rollout lab's (on the simulated cluster hostIP:nodePort is the way in). */
export function renderLedgerService(template: Record<string, any>, ledger: V1Pod): Record<string, any> {
  const port = template.spec.containers[0].ports[0];
  const labels = ledger.metadata!.labels!;
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: ledger.metadata!.name, labels },
    spec: {
      type: 'NodePort',
      selector: { [RUN_LABEL]: labels[RUN_LABEL]!, [SCENARIO_LABEL]: labels[SCENARIO_LABEL]!, [ROLE_LABEL]: RETRY_ROLES.ledger },
      ports: [{ name: 'http', port: SERVICE_PORT, targetPort: port.name ?? port.containerPort, protocol: 'TCP' }],
    },
  };
}
