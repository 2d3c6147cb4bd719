// The grader's own model of a rollout under load, written from Kubernetes' rules and apart from the
// simulator: for each old pod, from the lifecycle it really ran (its live read, never the
// template), whether requests sent through the Service can fail while it terminates.
import { parsePreStop } from '../../../server/contract-schemas.ts';
import { hookDurationSeconds } from '../../scenario/schema.ts';
import { graceOf, type KubeletRules, remainingAfterHook } from '../theory.ts';

/**
 * Endpoint removal → every proxy routing without the pod. The EndpointSlice controller marks a
 * terminating pod's endpoint not ready at its deletion (pkg/controller/endpointslice, 1.34);
 * kube-proxy applies a change at most minSyncPeriod after its last sync (iptables mode, 1 s:
 * pkg/proxy/apis/config/v1alpha1/defaults.go) plus the rule rewrite itself. A hook at least this
 * long keeps the pod serving until no proxy sends it new connections.
 */
export const PROXY_PROPAGATION_SECONDS = 2;

export type Exposure = 'expected' | 'possible' | 'none';

export interface PodPrediction {
  failures: Exposure;
  /** The hook's length in seconds, null when it cannot be told from the lifecycle. */
  hookSeconds: number | null;
  why: string;
}

/** How long a preStop handler runs, parsed back through the pod contract; null for a hook the lab does not render. */
function hookSecondsOf(lifecycle: Record<string, unknown> | null): number | null {
  const hook = parsePreStop(lifecycle?.preStop);
  return typeof hook === 'string' ? null : hookDurationSeconds(hook);
}

export function describeLifecycle(lifecycle: Record<string, unknown> | null): string {
  const preStop = lifecycle?.preStop as Record<string, any> | undefined;
  if (!preStop) return 'no preStop hook';
  const seconds = hookSecondsOf(lifecycle);
  const kind = preStop.exec ? 'exec' : preStop.sleep ? 'sleep action' : preStop.httpGet ? 'httpGet' : 'unknown handler';
  return `preStop ${kind}${seconds !== null && seconds > 0 ? ` ${seconds}s` : ''}`;
}

export function predictOldPod(input: {
  mode: string | null;
  lifecycle: Record<string, unknown> | null;
  /** The pod's spec grace: the ReplicaSet controller deletes with no grace of its own. */
  graceSeconds: number;
  workMs: number;
  /** The kubelet's rules for the cluster's own minor (theory.ts rulesFor). */
  rules: KubeletRules;
}): PodPrediction {
  const hook = hookSecondsOf(input.lifecycle);
  if (hook === null) return { failures: 'possible', hookSeconds: null, why: 'a preStop hook the model cannot time' };
  if (input.mode === 'immediate')
    return {
      failures: 'expected',
      hookSeconds: hook,
      why: 'immediate mode exits at TERM and cuts the requests in flight',
    };
  const grace = graceOf({ terminationGracePeriodSeconds: input.graceSeconds }, null, input.rules);
  const remaining = remainingAfterHook(grace, hook, input.rules);
  if (input.workMs / 1000 > remaining)
    return {
      failures: 'expected',
      hookSeconds: hook,
      why: `work of ${input.workMs / 1000}s outlasts the ${remaining}s left after the hook: cut by SIGKILL`,
    };
  if (hook >= PROXY_PROPAGATION_SECONDS)
    return {
      failures: 'none',
      hookSeconds: hook,
      why: `the ${hook}s hook outlasts the endpoint's removal from every proxy (${PROXY_PROPAGATION_SECONDS}s); then it drains`,
    };
  return {
    failures: 'possible',
    hookSeconds: hook,
    why: `TERM ${hook === 0 ? 'at once' : `after ${hook}s`}: the server stops listening while proxies may still send it new connections (up to ${PROXY_PROPAGATION_SECONDS}s after the endpoint's removal)`,
  };
}

export function combine(exposures: Exposure[]): Exposure {
  if (exposures.includes('expected')) return 'expected';
  if (exposures.includes('possible')) return 'possible';
  return 'none';
}
