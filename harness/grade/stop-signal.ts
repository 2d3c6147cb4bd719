// KEP-4960 in the model: which signal the kubelet's StopContainer makes the runtime send, and what the lab
// server does with it. Read in k8s.io/kubernetes v1.38.0-beta.0 (the same in v1.37.2): with the ContainerStopSignals
// gate off the API server drops lifecycle.stopSignal from a new pod without a word (pkg/api/pod/util.go
// dropContainerStopSignals, :871), and the kubelet hands the runtime no stop signal (kuberuntime/helpers.go
// getContainerConfigStopSignal, :528), so the runtime sends the image's STOPSIGNAL: SIGTERM for the lab's. With it
// on, the runtime sends the named one at StopContainer, on the same clock TERM would have come.
import { LAB_EXIT_CODES } from '../../server/contract.ts';
import type { Observation } from '../observation/schema.ts';
import type { Scenario } from '../scenario/schema.ts';
import { DEFAULT_STOP_SIGNAL, drainSignalOf } from '../scenario/stop-signal.ts';

/** The part of theory.ts's KubeletRules read here (structural: theory.ts imports this file). */
interface KubeletRules {
  containerStopSignals: { enabled: boolean; stage: string };
  source: string;
}

export interface StopSignalPlan {
  /** The scenario's lifecycle.stopSignal. */
  asked: string;
  /** What the runtime sends at StopContainer: the asked one when the pod kept it, else SIGTERM. */
  sent: string;
  delivered: boolean;
  /** From the live pod the run read (what the cluster did), or the minor's gate default (no run yet). */
  basis: 'live-pod' | 'gate-default';
  /** One line, said in the run's output, the observation and the grade. */
  note: string;
}

/** "1.37" from a rules table entry's source ("k8s.io/kubernetes v1.37.2"). */
const minorOf = (rules: KubeletRules) => /v(\d+\.\d+)/.exec(rules.source)?.[1] ?? 'the model';

const gateSays = (rules: KubeletRules) =>
  `${rules.containerStopSignals.stage} in ${minorOf(rules)}, ${rules.containerStopSignals.enabled ? 'on' : 'off'} by default`;

/** What the cluster did with the scenario's stopSignal, from the live pod's lab container (its lifecycle as read). */
export function stopSignalFromLivePod(
  scenario: Pick<Scenario, 'stopSignal'>,
  lifecycle: Record<string, unknown> | null | undefined,
  rules: KubeletRules,
): StopSignalPlan | null {
  if (!scenario.stopSignal) return null;
  const live = lifecycle?.stopSignal;
  if (typeof live === 'string' && live.length)
    return {
      asked: scenario.stopSignal,
      sent: live,
      delivered: true,
      basis: 'live-pod',
      note: `lifecycle.stopSignal ${live} was kept by this cluster (ContainerStopSignals ${gateSays(rules)}): the runtime sends ${live} instead of ${DEFAULT_STOP_SIGNAL}`,
    };
  const why = rules.containerStopSignals.enabled
    ? `its ContainerStopSignals gate was turned off (${gateSays(rules)})`
    : `the ContainerStopSignals gate is off (${rules.containerStopSignals.stage} in ${minorOf(rules)})`;
  return {
    asked: scenario.stopSignal,
    sent: DEFAULT_STOP_SIGNAL,
    delivered: false,
    basis: 'live-pod',
    note: `lifecycle.stopSignal was dropped by this cluster: ${why}; ${DEFAULT_STOP_SIGNAL} ran instead of ${scenario.stopSignal}`,
  };
}

/** Before any run (termlab scenarios --reveal, a prediction's model): the minor's gate default, said as the assumption. */
export function stopSignalByDefault(
  scenario: Pick<Scenario, 'stopSignal'>,
  rules: KubeletRules,
): StopSignalPlan | null {
  if (!scenario.stopSignal) return null;
  const on = rules.containerStopSignals.enabled;
  return {
    asked: scenario.stopSignal,
    sent: on ? scenario.stopSignal : DEFAULT_STOP_SIGNAL,
    delivered: on,
    basis: 'gate-default',
    note: on
      ? `assumed kept: ContainerStopSignals is ${gateSays(rules)}; a cluster with it off drops lifecycle.stopSignal and sends ${DEFAULT_STOP_SIGNAL}`
      : `assumed dropped: ContainerStopSignals is ${gateSays(rules)}, so the API server drops lifecycle.stopSignal and ${DEFAULT_STOP_SIGNAL} runs; a cluster with the gate on (termlab sim --feature-gates ContainerStopSignals=true) sends ${scenario.stopSignal}`,
  };
}

/** The side the assumption left out: the same stopSignal with the gate the other way, for `termlab scenarios --reveal`. */
export function otherSide(plan: StopSignalPlan): StopSignalPlan {
  const kept = !plan.delivered;
  return {
    ...plan,
    delivered: kept,
    sent: kept ? plan.asked : DEFAULT_STOP_SIGNAL,
    note: kept
      ? `with ContainerStopSignals on, lifecycle.stopSignal is kept and the runtime sends ${plan.asked}`
      : `with ContainerStopSignals off, the API server drops lifecycle.stopSignal and ${DEFAULT_STOP_SIGNAL} runs`,
  };
}

/**
 * What the graceful lab server does with the signal sent (server/contract.ts LAB_DRAIN_SIGNAL): drains on its
 * drain signal, and, draining on another, leaves at once on SIGTERM. Null when it drains on what it got.
 */
export function leavesAtOnce(scenario: Scenario, sent: string): string | null {
  const drain = drainSignalOf(scenario);
  if (scenario.mode !== 'graceful' || sent === drain) return null;
  return `the server drains only on ${drain}: on ${sent} it leaves at once, exit ${LAB_EXIT_CODES.immediate}`;
}

/** The observation's answer: the lab container's lifecycle as the run read it before the delete (null: no stopSignal asked). */
export function stopSignalOf(o: Observation, rules: KubeletRules): StopSignalPlan | null {
  // No live pod read: nothing shows what the cluster did, so the minor's default stands, said as assumed.
  if (!o.pod) return stopSignalByDefault(o.scenario, rules);
  const lab = o.pod.containers.find((c) => !c.init) ?? null;
  return stopSignalFromLivePod(o.scenario, lab?.lifecycle, rules);
}
