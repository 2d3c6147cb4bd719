// The grader's model of an edge scenario, written from Traefik's documented and sourced behaviour
// (docs/edge.md, /work/notes/edge-findings.md) and the kubelet's rules, apart from the simulator's edge:
// which causes of failure each scenario must show, may show, and must not show. Outcomes only, never
// sub-second timing: the lesson is which mechanism loses requests, not when.
import type { EdgeCause } from '../../edge/attribute.ts';
import type { EdgeScenario } from '../../scenario/edge.ts';
import { hookDurationSeconds } from '../../scenario/schema.ts';
import { graceOf, type KubeletRules, remainingAfterHook } from '../theory.ts';
import type { Exposure } from '../rollout/theory.ts';

/**
 * How long the edge may still send new requests to a pod after its EndpointSlice marked it not ready.
 * Traefik's Gateway provider keeps only ready endpoints (its Ingress provider fences terminating ones, which
 * get no new request), so the pod leaves the edge with the configuration built from that change. Traefik
 * forwards a provider's configuration through a one-slot ring and then sleeps
 * `providers.providersThrottleDuration` (2 s by default; pkg/provider/aggregator/aggregator.go): a change
 * after a quiet spell goes at once, one within 2 s of the last waits for the rest of them. In a rollout
 * every old pod's deletion follows a new pod's readiness, itself a new configuration, within moments: so
 * its removal waits nearly the whole 2 s. (/work/notes/edge-findings.md, node-edge's and sim-edge's reading.)
 */
export const EDGE_THROTTLE_SECONDS = 2;
/**
 * Traefik's own time to build and apply a configuration, on top of the throttle: node-edge measured up to
 * ~2.7 s (p99, a lone deletion, the node at load 10-15: docs/edge.md). A sleep at least the throttle plus this
 * outlasts the edge's lag however the changes fell.
 */
export const EDGE_PROCESSING_MAX_SECONDS = 2.7;
/**
 * Below this the edge surely still routes to the pod at its TERM in a rollout: the throttle's wait less the moment
 * between the new pod's readiness and the old pod's deletion (bursts measured p50 1.6-1.8 s on the node).
 */
export const EDGE_LAG_LOW_SECONDS = 1.5;
/** The longest the edge may still send a pod new requests after its EndpointSlice dropped it, in a rollout. */
export const EDGE_LAG_SECONDS = EDGE_THROTTLE_SECONDS + EDGE_PROCESSING_MAX_SECONDS;
/** Traefik's servers transport `forwardingTimeouts.idleConnTimeout` default: how long it keeps an idle upstream connection. */
export const EDGE_IDLE_TIMEOUT_SECONDS = 90;
/** Go's http.Transport replays these on a new connection when a reused one fails before any answer byte. */
const REPLAYED = new Set(['GET', 'HEAD', 'OPTIONS', 'TRACE']);

/** What the model says of one cause: must the run show it, may it, or must it not. */
export interface EdgeExpectation {
  /** The edge's causes; 'refused after TERM': the pod refused what reached it after its TERM (503 draining, a refused or unanswered connection) while still listed; 'cut at the pod': cut at TERM or by SIGKILL. */
  cause: EdgeCause | 'refused after TERM' | 'cut at the pod';
  exposure: Exposure;
  why: string;
}

export interface EdgePrediction {
  /** Whether any request fails: expected if any cause is, none if every cause is none. */
  failures: Exposure;
  expectations: EdgeExpectation[];
  hookSeconds: number;
  lagSeconds: number;
  steps: string[];
}

export interface EdgeModelInput {
  mode: string;
  hookSeconds: number;
  graceSeconds: number;
  workMs: number;
  keepAlive: EdgeScenario['app']['keepAlive'];
  keepAliveTimeoutMs: number;
  method: string;
  /** The rollout keeps a ready endpoint throughout (maxUnavailable 0). */
  alwaysServing: boolean;
  rules: KubeletRules;
}

export function edgeModelInput(s: EdgeScenario, rules: KubeletRules): EdgeModelInput {
  return {
    mode: s.pods.mode,
    hookSeconds: hookDurationSeconds(s.pods.preStop),
    graceSeconds: s.terminationGracePeriodSeconds,
    workMs: s.load.workMs,
    keepAlive: s.app.keepAlive,
    keepAliveTimeoutMs: s.app.keepAliveTimeoutMs,
    method: s.load.method,
    alwaysServing: s.maxUnavailable === 0 || s.maxUnavailable === '0%',
    rules,
  };
}

export function combineExposure(all: Exposure[]): Exposure {
  if (all.includes('expected')) return 'expected';
  if (all.includes('possible')) return 'possible';
  return 'none';
}

export function predictEdge(i: EdgeModelInput): EdgePrediction {
  const lag = EDGE_LAG_SECONDS;
  const hook = i.hookSeconds;
  const replayed = REPLAYED.has(i.method.toUpperCase());
  const steps: string[] = [];
  const out: EdgeExpectation[] = [];

  // The edge's lag: the app stops taking new work at TERM (503, then refused connections: 502 at the edge)
  // while the edge still sends it requests. Surely below the lag's low end; maybe within it; never past it.
  const stillRouted = hook < lag;
  const surely = hook < EDGE_LAG_LOW_SECONDS;
  out.push({
    cause: 'edge-routed-to-removed-endpoint',
    exposure: surely ? 'expected' : stillRouted ? 'possible' : 'none',
    why: surely
      ? `TERM ${hook === 0 ? 'at once' : `after the ${hook}s sleep`}, while the edge still sends the pod new requests for ${EDGE_LAG_LOW_SECONDS}s to ${lag}s after its endpoint is dropped in a rollout (its ${EDGE_THROTTLE_SECONDS}s throttle, then its own processing): they fail`
      : stillRouted
        ? `the ${hook}s sleep may or may not outlast the edge's lag (${EDGE_LAG_LOW_SECONDS}s to ${lag}s in a rollout)`
        : `the ${hook}s sleep outlasts the edge's lag (at most ${lag}s: its ${EDGE_THROTTLE_SECONDS}s throttle and its own processing): by TERM the edge sends the pod nothing new`,
  });
  steps.push(out.at(-1)!.why);

  // The kept-alive race: the app closes a pooled connection just as the edge sends on it.
  const idleShorter = i.keepAliveTimeoutMs / 1000 < EDGE_IDLE_TIMEOUT_SECONDS;
  const idleRace = idleShorter && !replayed;
  const race: Exposure = stillRouted || idleRace ? 'possible' : 'none';
  const idleWhy = idleRace
    ? `the app's own ${i.keepAliveTimeoutMs / 1000}s idle timeout, shorter than the edge's ${EDGE_IDLE_TIMEOUT_SECONDS}s, may close a connection under a ${i.method}, which the edge does not replay (502)`
    : idleShorter
      ? `a ${i.method} caught by the app's idle timeout is replayed by the edge on a new connection`
      : `the app keeps idle connections at least as long as the edge (${EDGE_IDLE_TIMEOUT_SECONDS}s)`;
  const raceWhy = stillRouted
    ? `${i.keepAlive === 'naive' ? 'the naive app closes its idle kept-alive connections at TERM' : 'the polite app answers with Connection: close after TERM'} while the edge still sends there: a 502 before the EndpointSlice dropped the pod is the race, after it the lag; ${idleWhy}`
    : `at TERM the edge sends the pod nothing, so ${i.keepAlive === 'naive' ? 'the naive app closing its idle connections' : 'closing its connections'} races no request; ${idleWhy}`;
  out.push({ cause: 'keepalive-closed-by-app', exposure: race, why: raceWhy });
  steps.push(raceWhy);

  // The edge with nothing to send to: a rollout that never leaves the Service without a ready endpoint has none.
  out.push({
    cause: 'no-endpoint-at-edge',
    exposure: i.alwaysServing ? 'none' : 'possible',
    why: i.alwaysServing
      ? 'the rollout keeps a ready endpoint at every moment (maxUnavailable 0): the edge always has one'
      : 'the rollout may leave no ready endpoint for a moment: the edge answers 503',
  });
  steps.push(out.at(-1)!.why);

  // What reaches the pod after its TERM, before the EndpointSlice showed it leaving: the kubelet's TERM and the
  // endpoint's removal come from one deletion, in either order.
  out.push({
    cause: 'refused after TERM',
    exposure: stillRouted ? 'possible' : 'none',
    why: stillRouted
      ? "TERM and the endpoint's removal come from the same deletion: what the edge sends in between is refused by the draining app (503)"
      : 'by TERM the pod has long left the edge: nothing reaches it to refuse',
  });
  steps.push(out.at(-1)!.why);

  // At the pod itself, as in a rollout without an edge: cut at TERM, or by SIGKILL.
  const grace = graceOf({ terminationGracePeriodSeconds: i.graceSeconds }, null, i.rules);
  const remaining = remainingAfterHook(grace, hook, i.rules);
  const atPod: EdgeExpectation =
    i.mode === 'immediate'
      ? {
          cause: 'cut at the pod',
          exposure: 'expected',
          why: 'immediate mode exits at TERM and cuts the requests in flight',
        }
      : i.workMs / 1000 > remaining
        ? {
            cause: 'cut at the pod',
            exposure: 'expected',
            why: `work of ${i.workMs / 1000}s outlasts the ${remaining}s left after the hook: cut by SIGKILL`,
          }
        : {
            cause: 'cut at the pod',
            exposure: 'none',
            why: `the graceful app finishes its work within the ${remaining}s left`,
          };
  out.push(atPod);
  steps.push(atPod.why);
  return {
    failures: combineExposure(out.map((e) => e.exposure)),
    expectations: out,
    hookSeconds: hook,
    lagSeconds: lag,
    steps,
  };
}
