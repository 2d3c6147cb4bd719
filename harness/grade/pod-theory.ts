// The grader's model of a pod with a sidecar proxy (issue 26), written from the kubelet's source apart
// from the simulator (cluster/sim/termination-order.ts), as theory.ts is for one container. Read in
// k8s.io/kubernetes v1.37.2 (the same in 1.34.4, 1.35.4, 1.36.3), pkg/kubelet/kuberuntime:
// - kuberuntime_termination_order.go newTerminationOrdering (lines 43-95): a main container has no
//   prerequisite; each restartable init container waits for every main container and for the sidecar
//   declared after it (the init containers are walked in reverse), so sidecars stop last, in reverse order.
// - waitForTurn (lines 99-118): waits on those prerequisites at most `gracePeriod` whole seconds (a timer),
//   and returns the seconds it waited.
// - kuberuntime_container.go killContainer (lines 896-915): the preStop hook first (its whole seconds off the
//   grace), then `gracePeriod -= int64(ordering.waitForTurn(name, gracePeriod))`, then at least
//   minimumGracePeriodInSeconds (2), then StopContainer(gracePeriod): TERM, and SIGKILL when that runs out.
//   containerTerminated (line 925) is called when StopContainer returns: once the container has exited.
// - killContainersWithSyncResult (line 932 on): every container's killContainer starts at once, so every
//   hook starts together and the grace is one budget counted from the same moment.
// The containers' own behaviour is the lab's: server/app.ts for the app, server/proxy.ts for the proxy.
import { LAB_EXIT_CODES } from '../../server/contract.ts';
import { describePreStop, hookDurationSeconds, type Scenario, type Sidecar } from '../scenario/schema.ts';
import {
  type ContainerPrediction,
  type KubeletRules,
  NEWEST_MINOR,
  type PodPrediction,
  hookWholeSeconds,
  type Prediction,
  predict,
  remainingAfterHook,
  RULES_BY_MINOR,
} from './theory.ts';

const fmt = (seconds: number) => String(Math.round(seconds * 1000) / 1000);

/** The proxy container's name and the scenario's sidecar block; the model has one sidecar, as the scenarios do. */
const PROXY = 'proxy';

/**
 * The pod's answer: from `app`, the one-container model's answer for the lab server (its hook, TERM, kill
 * and own end), the sidecar's times by the order above and both containers' ends as they interact: a
 * proxy that dies with the request open cuts it (the app sees its client go), and an app that is killed
 * ends what the proxy is passing on. Returns the app's Prediction with the client's outcome and the app's
 * end as the pod gives them, and the per-container answer in `pod`.
 */
function predictPod(scenario: Scenario & { sidecar: Sidecar }, app: Prediction, rules: KubeletRules): Prediction {
  const grace = app.graceSeconds;
  const appHook = scenario.preStop.kind === 'none' ? 0 : Math.min(hookDurationSeconds(scenario.preStop), grace);
  // Every killContainer starts together: the app's TERM less its hook's wait (the observed TERM when grading).
  const start = app.termAt - (app.hookEndsAt === null ? 0 : appHook);
  const reaction = app.basis === 'observed' ? 0 : rules.kubeletReactionSeconds;
  const workEndsAt = (scenario.workMs - scenario.deleteDelayMs) / 1000;
  const steps: string[] = [];
  const margins: number[] = [app.marginSeconds];
  // A distance to the work's end, with the kubelet's reaction window when no TERM was observed.
  const toWork = (at: number) => (workEndsAt < at ? at - workEndsAt : Math.max(0, workEndsAt - (at + reaction)));

  // The sidecar: its own hook at once, in parallel with the app's; its whole seconds off its grace.
  const sidecar = scenario.sidecar;
  const hookSeconds = sidecar.preStop.kind === 'none' ? 0 : hookDurationSeconds(sidecar.preStop);
  const hook = Math.min(hookSeconds, grace);
  // What the hook's whole seconds left of the grace: waitForTurn waits at most that.
  const left = grace - hookWholeSeconds(grace, hookSeconds);
  const waitFrom = start + hook;
  let wait: number | null = null;
  let byTimer = false;
  if (sidecar.native && left > 0) {
    // waitForTurn: until the app's killContainer returns (the app exited), at most `left` seconds.
    const appGone = app.exitAt;
    byTimer = appGone - waitFrom > left;
    wait = Math.max(0, Math.min(appGone - waitFrom, left));
    margins.push(Math.abs(appGone - (waitFrom + left)));
  } else if (sidecar.native) wait = 0;
  const stopGrace = remainingAfterHook(grace, hookSeconds, rules, wait ?? 0);
  const proxyTerm = waitFrom + (wait ?? 0);
  const proxyKill = proxyTerm + stopGrace;
  steps.push(
    `${describeSidecar(sidecar)}: preStop ${describePreStop(sidecar.preStop)} from ${fmt(start)}s${
      sidecar.native
        ? `, then waits for its turn ${fmt(wait ?? 0)}s (${byTimer ? 'the grace ran out first' : 'until the app is gone'})`
        : ', no wait: a main container'
    }; TERM at ${fmt(proxyTerm)}s, then ${stopGrace}s to exit before SIGKILL at ${fmt(proxyKill)}s`,
  );
  const terms = [
    `the proxy: ${sidecar.native ? `waitForTurn ${fmt(wait ?? 0)}s, ` : ''}StopContainer(${stopGrace}s) at ${fmt(proxyTerm)}s`,
  ];

  // When the proxy's death cuts a request still open through it: at TERM in exit mode, at its kill in drain mode.
  const proxyCutAt = sidecar.onTerm === 'exit' ? proxyTerm : proxyKill;
  const appOwnEnd = app.exitAt;
  const proxyCuts = proxyCutAt < workEndsAt && proxyCutAt < appOwnEnd && !(sidecar.native && !byTimer);
  // Both times must hold for the proxy to cut; one that clearly does not decides it whatever the other's margin
  // (a proxy killed a second after the app died cuts nothing, however near its kill is to the work's end).
  if (!(sidecar.native && !byTimer)) {
    const [toEnd, toApp] = [toWork(proxyCutAt), Math.abs(appOwnEnd - proxyCutAt)];
    margins.push(
      proxyCuts
        ? Math.min(toEnd, toApp)
        : Math.max(proxyCutAt < workEndsAt ? 0 : toEnd, proxyCutAt < appOwnEnd ? 0 : toApp),
    );
  }
  let appExit = { exitAt: app.exitAt, exitCode: app.exitCode, reason: app.reason };
  let outcome = app.outcome;
  let cutBy: PodPrediction['cutBy'] = app.outcome === 'cut' ? 'app' : null;
  let cause =
    app.outcome === 'cut'
      ? `the app is killed at ${fmt(app.killAt)}s with its work unfinished`
      : `the app finishes its work at ${fmt(workEndsAt)}s and the proxy passes it on`;
  if (proxyCuts) {
    outcome = 'cut';
    cutBy = 'proxy';
    // server/app.ts: the app sees its client go (`aborted`); a graceful one then drains at once, after its TERM.
    if (scenario.mode === 'graceful')
      appExit = { exitAt: Math.max(app.termAt, proxyCutAt), exitCode: 0, reason: 'Completed' };
    cause = `the proxy (${sidecar.native ? 'native sidecar' : 'regular container'}) ${sidecar.onTerm === 'exit' ? `exits ${LAB_EXIT_CODES.immediate} at its TERM` : 'is killed'} at ${fmt(proxyCutAt)}s while the app is still working (its work would end at ${fmt(workEndsAt)}s): the app sees its client go`;
  }
  // The proxy's own end: at TERM in exit mode; in drain mode once the request through it ended, unless killed first.
  const requestEndsAt = outcome === 'completed' ? workEndsAt : cutBy === 'app' ? appExit.exitAt : proxyCutAt;
  let proxyExit: Pick<ContainerPrediction, 'exitAt' | 'exitCode' | 'reason'>;
  if (sidecar.onTerm === 'exit') proxyExit = { exitAt: proxyTerm, exitCode: LAB_EXIT_CODES.immediate, reason: 'Error' };
  else {
    const drained = Math.max(proxyTerm, requestEndsAt);
    if (requestEndsAt > proxyTerm) margins.push(Math.abs(proxyKill - requestEndsAt));
    proxyExit =
      drained <= proxyKill
        ? { exitAt: drained, exitCode: 0, reason: 'Completed' }
        : { exitAt: proxyKill, exitCode: 137, reason: 'Error' };
  }
  steps.push(
    `the client's request: ${outcome} (${cause}); the proxy ${proxyExit.exitCode === 137 ? 'is killed (137)' : `exits ${proxyExit.exitCode}`} at ${fmt(proxyExit.exitAt)}s`,
  );

  const pod: PodPrediction = {
    startAt: start,
    cutBy,
    cause,
    containers: [
      {
        name: 'lab',
        role: 'app',
        native: false,
        hookEndsAt: app.hookEndsAt,
        termAt: app.termAt,
        killAt: app.killAt,
        ...appExit,
        turnWaitSeconds: null,
        turnByTimer: false,
        stopGraceSeconds: app.killAt - app.termAt,
      },
      {
        name: PROXY,
        role: 'sidecar',
        native: sidecar.native,
        hookEndsAt: sidecar.preStop.kind === 'none' ? null : waitFrom,
        termAt: proxyTerm,
        killAt: proxyKill,
        ...proxyExit,
        turnWaitSeconds: wait,
        turnByTimer: byTimer,
        stopGraceSeconds: stopGrace,
      },
    ],
  };
  return {
    ...app,
    outcome,
    exitAt: appExit.exitAt,
    exitCode: appExit.exitCode,
    reason: appExit.reason,
    podStatus: {
      ...app.podStatus,
      phase: appExit.exitCode === 0 && (sidecar.native || proxyExit.exitCode === 0) ? 'Succeeded' : 'Failed',
    },
    marginSeconds: Math.min(...margins),
    steps: [...app.steps, ...steps],
    terms: [...app.terms, ...terms],
    pod,
  };
}

function describeSidecar(s: Sidecar): string {
  return `the proxy (${s.native ? 'native sidecar' : 'regular container'}, ${s.onTerm} on TERM)`;
}

/** The model for any scenario: theory.ts's for one container, with the pod's answer over it when it has a sidecar. */
export function predictScenario(
  scenario: Scenario,
  ...rest: Parameters<typeof predict> extends [unknown, ...infer R] ? R : never
): Prediction {
  const app = predict(scenario, ...rest);
  return scenario.sidecar
    ? predictPod({ ...scenario, sidecar: scenario.sidecar }, app, rest[1] ?? RULES_BY_MINOR.get(NEWEST_MINOR)!)
    : app;
}
