// The grader's model of the kubelet (../shared/kubelet-termination.md), written apart from
// the simulator on purpose: the comparison means something only if the two are independent.
import { LAB_EXIT_CODES, LAB_TERM_ALLOCATE_MIB_PER_SECOND } from '../../server/contract.ts';
import { hookDurationSeconds, type Scenario } from '../scenario/schema.ts';
import { DEFAULT_STOP_SIGNAL } from '../scenario/stop-signal.ts';
import { leavesAtOnce, type StopSignalPlan, stopSignalByDefault } from './stop-signal.ts';

/**
 * The kubelet's rules, per Kubernetes minor: one entry per minor the simulator or the project's real node
 * runs (test/grade/versions.test.ts fails when one is missing). Read from each release's source, apart
 * from the simulator's own account (cluster/sim/versions.ts), on purpose.
 */
export interface KubeletRules {
  /** pod_workers.go calculateEffectiveGracePeriod: the grace the kubelet applies is never below this. */
  minimumEffectiveGraceSeconds: number;
  /** kuberuntime_container.go killContainer: the remainder after the hook is never below this. */
  minimumGracePeriodSeconds: number;
  /**
   * The kubelet acts on a DELETE only after its pod worker's syncs have each waited for a PLEG relist
   * (pod_workers.go podCache.GetNewerThan; generic PLEG relist every 1 s): the kill sequence starts
   * 0-2 s after the delete, measured 1.5-1.9 s on the project's real node. Every time the model
   * gives is the earliest; the kubelet's action comes within this window after it.
   */
  kubeletReactionSeconds: number;
  /**
   * pkg/kubelet/active_deadline.go: a pod is past its deadline once the kubelet's clock is
   * activeDeadlineSeconds past status.startTime, which the status manager keeps in whole seconds
   * (status_manager.go normalizeStatus). The sync loop's 1 s syncTicker asks ShouldSync; that sync's
   * generateAPIPodStatus takes ShouldEvict's answer (phase Failed, DEADLINE_EXCEEDED's reason and message, Ready
   * off), SyncPod returns terminal, and the terminating sync waits for a PLEG relist newer than it (1 s)
   * before killContainer: the kill sequence starts 0-2 s after the deadline (measured on the real node,
   * 1.37.2: TERM 1.45-1.85 s after it). The grace is the pod's: no delete gave one (calculateEffectiveGracePeriod).
   */
  deadlineReactionSeconds: number;
  /**
   * The ContainerStopSignals gate (KEP-4960, `lifecycle.stopSignal`) at its default for the minor
   * (pkg/features/kube_features.go). Off: the API server drops the field silently (pkg/api/pod/util.go
   * dropContainerStopSignals) and the kubelet passes no stop signal (kuberuntime/helpers.go
   * getContainerConfigStopSignal), so the runtime sends the image's, SIGTERM for the lab's.
   */
  containerStopSignals: { enabled: boolean; stage: 'alpha' | 'beta' | 'GA' };
  /** Where the rules were read and checked. */
  source: string;
}

/** ContainerStopSignals: alpha from 1.33 and off by default through 1.38.0-beta.0, whose versioned gate list
 * has still the one 1.33 entry (kube_features.go:1443 in v1.37.2, :1328 in v1.38.0-beta.0): its beta missed 1.38 too. */
const STOP_SIGNALS_ALPHA = { enabled: false, stage: 'alpha' } as const;

// The kill path is the same in all four (killContainer, executePreStopHook, killContainersWithSyncResult,
// setTerminationGracePeriod, calculateEffectiveGracePeriod, minimumGracePeriodInSeconds = 2). From 1.36 the
// kubelet reacts up to about a second sooner (its PLEG relists a pod on demand after a sync that changed it),
// still inside the same 2 s window (docs/versions.md has what was measured on which version). active_deadline.go
// and its place in the sync loop (syncTicker, generateAPIPodStatus's ShouldEvict) are the same in all four.
// 1.38 (read in v1.38.0-beta.0, diffed against v1.37.2): the same rules. kuberuntime_container.go executePreStopHook
// (:790, whole seconds) and killContainer (:870; waitForTurn's seconds off at :910, the floor at :914) are unchanged,
// minimumGracePeriodInSeconds is still 2 (kuberuntime_manager.go:86) and kuberuntime_termination_order.go is
// byte for byte 1.37.2's; killContainersWithSyncResult is split into killRunningPodContainers (:938) and
// killContainers (:961), still every container at once. pod_workers.go calculateEffectiveGracePeriod (:1016) and
// the GetNewerThan wait (:1295, its "~1s of latency" TODO at :1288) are unchanged, the generic PLEG still relists
// every 1 s (kubelet.go:216). SyncTerminatingPod (kubelet.go:2360) is still one pass, killPod then the stopped
// status: kubernetes#140133's reconcile loop is not in the tag, and the 2 s after hooks stays. It now applies the
// caller's status function again after the stop (:2481), which eviction and node shutdown use, not a delete nor
// the active deadline. ContainerStopSignals is still alpha and off.
export const RULES_BY_MINOR: ReadonlyMap<string, KubeletRules> = new Map([
  [
    '1.34',
    {
      minimumEffectiveGraceSeconds: 1,
      minimumGracePeriodSeconds: 2,
      kubeletReactionSeconds: 2,
      deadlineReactionSeconds: 2,
      containerStopSignals: STOP_SIGNALS_ALPHA,
      source: 'k8s.io/kubernetes v1.34.4',
    },
  ],
  [
    '1.35',
    {
      minimumEffectiveGraceSeconds: 1,
      minimumGracePeriodSeconds: 2,
      kubeletReactionSeconds: 2,
      deadlineReactionSeconds: 2,
      containerStopSignals: STOP_SIGNALS_ALPHA,
      source: 'k8s.io/kubernetes v1.35.4',
    },
  ],
  [
    '1.36',
    {
      minimumEffectiveGraceSeconds: 1,
      minimumGracePeriodSeconds: 2,
      kubeletReactionSeconds: 2,
      deadlineReactionSeconds: 2,
      containerStopSignals: STOP_SIGNALS_ALPHA,
      source: 'k8s.io/kubernetes v1.36.3',
    },
  ],
  [
    '1.37',
    {
      minimumEffectiveGraceSeconds: 1,
      minimumGracePeriodSeconds: 2,
      kubeletReactionSeconds: 2,
      deadlineReactionSeconds: 2,
      containerStopSignals: STOP_SIGNALS_ALPHA,
      source: 'k8s.io/kubernetes v1.37.2',
    },
  ],
  [
    '1.38',
    {
      minimumEffectiveGraceSeconds: 1,
      minimumGracePeriodSeconds: 2,
      kubeletReactionSeconds: 2,
      deadlineReactionSeconds: 2,
      containerStopSignals: STOP_SIGNALS_ALPHA,
      source: 'k8s.io/kubernetes v1.38.0-beta.0',
    },
  ],
]);

const minorNumber = (minor: string) => Number(minor.split('.')[1]);
/** The minors the model has rules for, oldest first. */
export const KNOWN_MINORS = [...RULES_BY_MINOR.keys()].sort((x, y) => minorNumber(x) - minorNumber(y));
export const NEWEST_MINOR = KNOWN_MINORS.at(-1)!;
const OLDEST_MINOR = KNOWN_MINORS[0]!;

export interface VersionedRules {
  minor: string;
  rules: KubeletRules;
  note: string | null;
}

/** The rules for an observation's serverVersion ("v1.37.2", "v1.35.4-termlab-sim", "v1.36.1+k3s1"). */
export function rulesFor(serverVersion: string | null | undefined): VersionedRules {
  const match = /^v?(\d+)\.(\d+)/.exec(serverVersion ?? '');
  const minor = match && match[1] === '1' ? `1.${Number(match[2])}` : null;
  const newest = RULES_BY_MINOR.get(NEWEST_MINOR)!;
  if (!minor)
    return {
      minor: NEWEST_MINOR,
      rules: newest,
      note: `server version ${JSON.stringify(serverVersion ?? null)} names no Kubernetes 1.x minor: graded with the ${NEWEST_MINOR} rules, the newest the model knows`,
    };
  const known = RULES_BY_MINOR.get(minor);
  if (known) return { minor, rules: known, note: null };
  if (minorNumber(minor) > minorNumber(NEWEST_MINOR)) {
    return {
      minor: NEWEST_MINOR,
      rules: newest,
      note: `Kubernetes ${minor} is newer than the model knows (${OLDEST_MINOR}-${NEWEST_MINOR}): graded with the ${NEWEST_MINOR} rules`,
    };
  }
  return {
    minor: OLDEST_MINOR,
    rules: RULES_BY_MINOR.get(OLDEST_MINOR)!,
    note: `Kubernetes ${minor} is older than the model knows (${OLDEST_MINOR}-${NEWEST_MINOR}): graded with the ${OLDEST_MINOR} rules`,
  };
}

/**
 * pod_workers.go calculateEffectiveGracePeriod: the grace the kubelet kills a pod with is the delete's
 * (metadata.deletionGracePeriodSeconds) when it gave one, else the pod spec's, and never below the rules'
 * floor (1 s). A kill the active deadline started has no deletion grace: pass null.
 */
export function graceOf(
  spec: { terminationGracePeriodSeconds: number },
  deletionGrace: number | null,
  rules: KubeletRules,
): number {
  return Math.max(rules.minimumEffectiveGraceSeconds, deletionGrace ?? spec.terminationGracePeriodSeconds);
}

/**
 * kuberuntime_container.go executePreStopHook: the kubelet waits for the hook at most the grace and
 * counts the time it waited in whole seconds (truncated).
 */
export function hookWholeSeconds(grace: number, hookSeconds: number): number {
  return Math.floor(Math.min(hookSeconds, grace));
}

/**
 * kuberuntime_container.go killContainer: the seconds StopContainer is given after a hook of `hookSeconds`
 * (0: none): the grace less the hook's whole seconds, and less the whole seconds a restartable init
 * container waited for its turn (waitForTurn; 0 for any other), raised to minimumGracePeriodInSeconds
 * (the "one-off 2 second extension" when the hook took the whole grace).
 */
export function remainingAfterHook(
  grace: number,
  hookSeconds: number,
  rules: KubeletRules,
  turnWaitSeconds = 0,
): number {
  return Math.max(
    rules.minimumGracePeriodSeconds,
    grace - hookWholeSeconds(grace, hookSeconds) - Math.floor(turnWaitSeconds),
  );
}
/** Timing is used only to attribute, never to grade, and never tighter than a second. */
export const TOLERANCE_SECONDS = 1;
/** Kubelets from 1.28 on have been seen to add 1-2 s between the hook's end and the kill. */
export const KUBELET_EXTRA_DELAY_SECONDS = 2;

/** active_deadline.go: the status the kubelet gives a pod it ends for its deadline (mergePodStatus holds it back, with the phase Failed, until no container can run). */
export const DEADLINE_EXCEEDED = {
  reason: 'DeadlineExceeded',
  message: 'Pod was active on the node longer than the specified deadline',
} as const;

/**
 * The pod's active deadline, where a run places it: `passesAt` is startTime (whole seconds) plus the
 * pod's activeDeadlineSeconds, in seconds after the delete on the server's clock (negative: before
 * it); null when nothing placed it (no run yet: then it is at most `seconds` after the acceptance).
 */
export interface DeadlineTiming {
  seconds: number;
  passesAt: number | null;
  /**
   * When the API took the delete (its deletionTimestamp less the grace, whole seconds), seconds after the
   * harness issued it: a loaded API server can take it many seconds late, and the kubelet sees no
   * deletion before then. Null or absent: taken as issued.
   */
  deleteTakenAt?: number | null;
}

/**
 * How closely the observed times place the work's end against the kill (or TERM): TERM and the work's
 * start are read off the server's one clock, so what they leave open is the runtime's kill timer and
 * the server's work timer, each late by a few to tens of milliseconds on a loaded machine (the work's
 * `completed` line came up to 19 ms after its time in the check:model grid's runs). A machine starved
 * past that (load average 12-17 on 2 cores) once had the simulator's SIGKILL timer fire at least
 * 0.31 s late (check:model, 1 of 240): such a run is graded "differs" and is worth running again.
 */
const OBSERVED_RESOLUTION_SECONDS = 0.1;

/**
 * What the evidence shows the kubelet did, in seconds after the delete as the server's clock places it
 * (its `accepted` line plus the delay the harness waited): kubelet-times.ts reads and cross-examines it.
 */
export interface ObservedKubelet {
  /** TERM as the server logged it: the moment StopContainer began, from which the remainder runs. */
  termAt: number;
  /**
   * The kill sequence's start is no earlier than this (the delete, the Killing event's second) and no
   * later than `startNotAfter` (a hook's first line, the Killing event's next second; null: nothing
   * shows it). The kubelet's whole seconds of hook are what TERM minus the start leaves open.
   */
  startNotBefore: number;
  startNotAfter: number | null;
  /** When an httpGet hook's request reached the server (its hook-start line), else null. */
  hookRequestStartAt: number | null;
}

export type RequestOutcome = 'completed' | 'cut';

export interface Prediction {
  /**
   * What starts the kill: the delete, or the pod's active deadline passing before the delete's own
   * kill could begin (the kubelet fails the pod, DeadlineExceeded, with the spec's grace).
   */
  cause: 'delete' | 'deadline';
  /** For the deadline: when it passes, seconds after the delete (negative: before it); the latest it can be when no run placed it. */
  deadlineAt: number | null;
  /** The pod's phase and status reason and message at the end, as the kubelet writes them. */
  podStatus: { phase: 'Succeeded' | 'Failed'; reason: string | null; message: string | null };
  /** Effective grace: deletion grace else spec grace, at least 1 s (the spec's alone when the deadline ends the pod). */
  graceSeconds: number;
  /** Seconds after the delete (for the deadline too: then they are negative, before it). */
  hookEndsAt: number | null;
  termAt: number;
  /** When SIGKILL comes if the container is still alive; null if it exits at TERM. */
  killAt: number;
  /** The earliest the kill can come: killAt, unless the observed start leaves the hook's whole seconds open. */
  killEarliestAt: number;
  /** When the container is expected to exit, seconds after the delete. */
  exitAt: number;
  outcome: RequestOutcome;
  exitCode: number;
  /** containerd's reason: OOMKilled when the kernel killed the container for its memory limit. */
  reason: 'Completed' | 'Error' | 'OOMKilled';
  /** When the request's work ends if nothing cuts it, seconds after the delete. */
  workEndsAt: number;
  /** When the kubelet began the kill sequence (the hook, else TERM), seconds after the delete: the grace runs from here. */
  kubeletBeganAt: number;
  /** Seconds between the request's end and the kill; small means "too close to call". */
  marginSeconds: number;
  /** A margin below this is too close to call: a second from the delete, a tenth from observed times. */
  resolutionSeconds: number;
  /** Where the times come from: the rules alone (the kubelet starts 0-2 s after the delete or the deadline), or the kubelet's observed TERM. */
  basis: 'window' | 'observed';
  /** The model's reasoning in the lab's words (the reports' "Model:" line). */
  steps: string[];
  /** The same in the kubelet's own terms (its functions and constants), for a reader who wants them (docs/grading.md). */
  terms: string[];
  /** A pod with a sidecar: every container's answer (pod-theory.ts); the fields above are the app's and the client's. */
  pod?: PodPrediction;
  /** A scenario with a lifecycle.stopSignal: whether the cluster kept it, and so which signal StopContainer sent. */
  stopSignal?: StopSignalPlan;
}

/** One container's answer in a pod with a sidecar (pod-theory.ts predictPod). */
export interface ContainerPrediction {
  name: string;
  role: 'app' | 'sidecar';
  native: boolean;
  /** Seconds after the delete, on the model's clock (the app's observed TERM when grading). */
  hookEndsAt: number | null;
  termAt: number;
  killAt: number;
  exitAt: number;
  exitCode: number;
  reason: 'Completed' | 'Error' | 'OOMKilled';
  /** A native sidecar's wait for its turn (waitForTurn), seconds; null for a main container. */
  turnWaitSeconds: number | null;
  /** Its turn came because the grace ran out while it waited, not because the app was gone. */
  turnByTimer: boolean;
  /** The seconds StopContainer was given. */
  stopGraceSeconds: number;
}

export interface PodPrediction {
  /** When every container's killContainer began (the kill sequence's start), seconds after the delete. */
  startAt: number;
  containers: ContainerPrediction[];
  /** Who ended the client's request early: the proxy, the app's kill, or nothing (it completed). */
  cutBy: 'proxy' | 'app' | null;
  cause: string;
}

/**
 * server/app.ts: on TERM a server with LAB_TERM_ALLOCATE_MIB allocates that much, paced; over the
 * container's memory limit the kernel's OOM killer ends it (containerd: OOMKilled, 137). At the latest
 * that is when the allocation alone reaches the limit (what the server held before only brings it
 * sooner): seconds after TERM, or null when the allocation stays under the limit or there is none.
 */
export function memoryKillAfterTerm(scenario: Scenario): number | null {
  const limit = scenario.memoryLimitMiB,
    allocate = scenario.termAllocateMiB;
  if (!limit || !allocate || allocate < limit) return null;
  return limit / LAB_TERM_ALLOCATE_MIB_PER_SECOND;
}

/** Seconds as a step shows them: observed times to the millisecond, the rules' own as they are. */
const fmt = (seconds: number) => String(Math.round(seconds * 1000) / 1000);

/** The deadline a scenario gives its pod, placed by no run (termlab predict, the design); null when it sets none of its own. */
function scenarioDeadline(scenario: Scenario): DeadlineTiming | null {
  return scenario.activeDeadlineSeconds === undefined
    ? null
    : { seconds: scenario.activeDeadlineSeconds, passesAt: null };
}

interface Trigger {
  cause: 'delete' | 'deadline';
  at: number;
  step: string;
}

/**
 * What starts the kill, and when (seconds after the delete). The deadline does when its kill sequence
 * must have begun before the delete's could (it passed more than the kubelet's reaction before the
 * delete), or when the evidence shows the kill begun before the delete. Nearer, the delete is taken:
 * the deadline and the delete raced (deadline.ts makes that inconclusive when the pod says otherwise).
 */
function triggerOf(
  scenario: Scenario,
  deadline: DeadlineTiming | null,
  rules: KubeletRules,
  observed: ObservedKubelet | null,
): Trigger {
  const byDelete: Trigger = { cause: 'delete', at: 0, step: '' };
  if (!deadline) return byDelete;
  // Placed by no run, it passes at the latest its seconds after the acceptance: the pod started before it.
  const at = deadline.passesAt ?? deadline.seconds - scenario.deleteDelayMs / 1000;
  // The kubelet can act on the delete only once the API has taken it.
  const taken = Math.max(0, deadline.deleteTakenAt ?? 0);
  const killBegunBefore =
    observed !== null && (observed.termAt < taken || (observed.startNotAfter ?? Number.POSITIVE_INFINITY) < taken);
  if (!(at + rules.deadlineReactionSeconds <= taken || (at <= taken && killBegunBefore))) return byDelete;
  const where =
    deadline.passesAt === null
      ? `at most ${deadline.seconds}s after the request's acceptance, ${fmt(-at)}s before the delete`
      : at < 0
        ? `${fmt(-at)}s before the delete (startTime + ${deadline.seconds}s)`
        : `${fmt(at)}s after the harness's delete, before the API took it (${fmt(taken)}s after) (startTime + ${deadline.seconds}s)`;
  return {
    cause: 'deadline',
    at,
    step: `activeDeadlineSeconds ${deadline.seconds}s passes ${where}: the kubelet fails the pod (${DEADLINE_EXCEEDED.reason}) and kills it with its own grace`,
  };
}

/**
 * The model's answer. With no observed times (termlab predict, a run not yet made) every time is the
 * earliest and the kubelet's start lies in a 0-2 s window after it; with the kubelet's observed TERM
 * (grading), the rules run from it and only the resolution of those times is left open. A scenario's
 * stopSignal is taken as the live pod showed it (`stop`, stop-signal.ts), else at the minor's gate default.
 */
export function predict(
  scenario: Scenario,
  deletionGrace: number | null = null,
  rules: KubeletRules = RULES_BY_MINOR.get(NEWEST_MINOR)!,
  observed: ObservedKubelet | null = null,
  deadline: DeadlineTiming | null = scenarioDeadline(scenario),
  stop: StopSignalPlan | null = stopSignalByDefault(scenario, rules),
): Prediction {
  const answer = predictSignalled(scenario, deletionGrace, rules, observed, deadline, stop);
  return stop ? { ...answer, stopSignal: stop } : answer;
}

function predictSignalled(
  scenario: Scenario,
  deletionGrace: number | null,
  rules: KubeletRules,
  observed: ObservedKubelet | null,
  deadline: DeadlineTiming | null,
  stop: StopSignalPlan | null,
): Prediction {
  // StopContainer sends the stop signal on TERM's clock; a graceful server draining on another leaves at once.
  const sent = stop?.sent ?? DEFAULT_STOP_SIGNAL;
  const leaves = leavesAtOnce(scenario, sent);
  if (leaves) scenario = { ...scenario, mode: 'immediate' };
  const trigger = triggerOf(scenario, deadline, rules, observed);
  // With the deadline placed by a run, the window opens at it; with none, it is at most its seconds after
  // the acceptance, so the kill may come any time before the latest and nothing bounds it from below.
  const reaction = observed
    ? 0
    : trigger.cause === 'deadline'
      ? rules.deadlineReactionSeconds
      : rules.kubeletReactionSeconds;
  const unplaced = trigger.cause === 'deadline' && !observed && deadline?.passesAt === null;
  const resolutionSeconds = observed ? OBSERVED_RESOLUTION_SECONDS : TOLERANCE_SECONDS;
  const basis = observed ? ('observed' as const) : ('window' as const);
  const steps: string[] = [];
  const terms: string[] = [];
  // A deadline's kill takes the pod's own grace: no delete had given one (a later delete can only shorten it).
  const grace = graceOf(scenario, trigger.cause === 'deadline' ? null : deletionGrace, rules);
  if (trigger.cause === 'deadline') steps.push(trigger.step);
  if (stop) steps.push(stop.note);
  steps.push(`grace ${grace}s`);
  const hookSeconds = scenario.preStop.kind === 'none' ? 0 : hookDurationSeconds(scenario.preStop);
  const elapsedWhole = hookWholeSeconds(grace, hookSeconds);
  let termAt = trigger.at;
  let kubeletBeganAt = trigger.at;
  let hookEndsAt: number | null = null;
  if (scenario.preStop.kind !== 'none') {
    const hookWait = Math.min(hookSeconds, grace);
    hookEndsAt = trigger.at + hookWait;
    termAt = trigger.at + hookWait;
    steps.push(
      hookWait < hookSeconds
        ? `preStop cut off at the grace (${grace}s), still running`
        : `preStop runs ${hookWait}s, ${elapsedWhole}s taken from the grace`,
    );
  }
  const remaining = remainingAfterHook(grace, hookSeconds, rules);
  terms.push(`killContainer with gracePeriod ${grace}s`);
  if (scenario.preStop.kind !== 'none')
    terms.push(`executePreStopHook: ${elapsedWhole}s (whole seconds) taken off gracePeriod`);
  if (remaining > grace - elapsedWhole) {
    steps.push(
      `${grace - elapsedWhole}s of grace left, but the kubelet always gives at least ${remaining}s from SIGTERM to SIGKILL${scenario.preStop.kind === 'none' ? '' : ', even when the hook used the whole grace'}`,
    );
    terms.push(`remainder ${grace - elapsedWhole}s raised to ${remaining}s (minimumGracePeriodInSeconds)`);
  }
  // The kill as early as the rules allow (the window's start, or TERM + the least remainder the observed start leaves open).
  let killEarliest = termAt + remaining;
  if (observed) {
    // StopContainer(remainder) starts at TERM as the server logged it; the hook's whole seconds are
    // TERM minus the kill sequence's start, which the evidence bounds (a sleep action's are its own).
    termAt = observed.termAt;
    if (hookEndsAt !== null) hookEndsAt = termAt;
    // The kill sequence began the hook's wait before TERM (at TERM with no hook): the grace's budget runs from there.
    kubeletBeganAt = termAt - (hookEndsAt === null ? 0 : Math.min(hookSeconds, grace));
    if (
      scenario.preStop.kind === 'exec-sleep' ||
      scenario.preStop.kind === 'exec-fail' ||
      scenario.preStop.kind === 'httpGet'
    ) {
      const hookWait = hookEndsAt === null ? 0 : Math.min(hookSeconds, grace);
      const latest = Math.min(observed.startNotAfter ?? Number.POSITIVE_INFINITY, termAt - hookWait);
      const earliest = Math.min(observed.startNotBefore, latest);
      const mostWhole = Math.floor(termAt - earliest);
      const leastRemaining = remainingAfterHook(grace, termAt - earliest, rules);
      killEarliest = termAt + Math.min(leastRemaining, remaining);
      if (leastRemaining < remaining)
        steps.push(
          `the kill sequence began ${fmt(earliest)}-${fmt(latest)}s after the delete: the kubelet counted ${Math.floor(hookWait)}-${mostWhole} whole seconds of hook, SIGKILL ${fmt(termAt + leastRemaining)}-${fmt(termAt + remaining)}s`,
        );
    } else {
      killEarliest = termAt + remaining;
    }
  }
  const killAt = termAt + remaining;
  steps.push(`${sent} at ${fmt(termAt)}s, SIGKILL at ${fmt(killAt)}s`);
  terms.push(`StopContainer(${remaining}s): the stop signal at ${fmt(termAt)}s, SIGKILL at ${fmt(killAt)}s`);

  const workEndsAt = (scenario.workMs - scenario.deleteDelayMs) / 1000;
  // Distance from the work's end to a window [from, at + reaction]; 0 inside it: too close to call.
  const marginTo = (at: number, from = at) =>
    workEndsAt < (unplaced ? Number.NEGATIVE_INFINITY : from)
      ? from - workEndsAt
      : Math.max(0, workEndsAt - (at + reaction));
  steps.push(
    observed
      ? `TERM as the server logged it, ${observed.termAt < 0 ? `${fmt(-observed.termAt)}s before` : `${fmt(observed.termAt)}s after`} the delete: the model counts from the TERM this run saw`
      : `the kubelet starts this 0-${reaction}s after the ${trigger.cause === 'deadline' ? 'deadline passes' : 'delete'}${unplaced ? ' (the deadline itself at the latest: the pod started before the request was accepted)' : ''}`,
  );
  if (observed)
    terms.push(
      'the rules run from the observed kubelet: its TERM as the server logged it, not a window after the delete',
    );
  const deadlineAt = trigger.cause === 'deadline' ? trigger.at : null;
  const statusFor = (exitCode: number): Prediction['podStatus'] =>
    trigger.cause === 'deadline'
      ? { phase: 'Failed', ...DEADLINE_EXCEEDED }
      : { phase: exitCode === 0 ? 'Succeeded' : 'Failed', reason: null, message: null };
  if (scenario.mode === 'immediate') {
    const completed = workEndsAt <= termAt;
    return {
      cause: trigger.cause,
      deadlineAt,
      podStatus: statusFor(LAB_EXIT_CODES.immediate),
      graceSeconds: grace,
      hookEndsAt,
      termAt,
      killAt,
      killEarliestAt: killEarliest,
      exitAt: termAt,
      resolutionSeconds,
      basis,
      terms,
      outcome: completed ? 'completed' : 'cut',
      exitCode: LAB_EXIT_CODES.immediate,
      reason: 'Error',
      kubeletBeganAt,
      workEndsAt,
      marginSeconds: marginTo(termAt),
      steps: [...steps, leaves ?? `immediate mode exits ${LAB_EXIT_CODES.immediate} at TERM`],
    };
  }
  const oom = memoryKillAfterTerm(scenario);
  // A graceful server with nothing left at TERM exits at once, before its allocation gets far.
  if (oom !== null && (scenario.mode === 'ignore-term' || workEndsAt > termAt)) {
    const oomAt = termAt + oom;
    // Work ending between TERM and the limit may finish first (then a graceful server exits 0): too close to call.
    const completed = workEndsAt <= termAt;
    const raced = killAt <= oomAt;
    return {
      cause: trigger.cause,
      deadlineAt,
      podStatus: statusFor(137),
      graceSeconds: grace,
      hookEndsAt,
      termAt,
      killAt,
      killEarliestAt: killEarliest,
      exitAt: raced ? killAt : oomAt,
      resolutionSeconds,
      basis,
      terms,
      outcome: completed ? 'completed' : 'cut',
      exitCode: 137,
      reason: 'OOMKilled',
      kubeletBeganAt,
      workEndsAt,
      marginSeconds: raced ? 0 : Math.min(marginTo(oomAt, termAt), killAt - oomAt),
      steps: [
        ...steps,
        `on TERM the server allocates ${scenario.termAllocateMiB} MiB at ${LAB_TERM_ALLOCATE_MIB_PER_SECOND} MiB/s against its ${scenario.memoryLimitMiB} MiB limit: ${raced ? 'the limit and the kill race' : `the kernel kills it for memory by ${fmt(oomAt)}s, before the kill: 137 OOMKilled`}`,
      ],
    };
  }
  if (scenario.mode === 'ignore-term') {
    // server/app.ts: TERM is logged and nothing else happens, so the server never exits on its own;
    // its work runs on until the kill, and SIGKILL (128 + 9) ends the container whatever the work did.
    const completed = workEndsAt <= killAt;
    return {
      cause: trigger.cause,
      deadlineAt,
      podStatus: statusFor(137),
      graceSeconds: grace,
      hookEndsAt,
      termAt,
      killAt,
      killEarliestAt: killEarliest,
      exitAt: killAt,
      resolutionSeconds,
      basis,
      terms,
      outcome: completed ? 'completed' : 'cut',
      exitCode: 137,
      reason: 'Error',
      kubeletBeganAt,
      workEndsAt,
      marginSeconds: marginTo(killAt, killEarliest),
      steps: [
        ...steps,
        `ignore-term: TERM changes nothing, only SIGKILL ends it: 137; work ${completed ? `ends at ${fmt(workEndsAt)}s, before` : `would end at ${fmt(workEndsAt)}s, after`} the kill`,
      ],
    };
  }
  const completed = workEndsAt <= killAt;
  // An httpGet hook to the server is a request to it too: the kubelet stops waiting at the grace but
  // does not cancel the call, so a draining server exits only once that answer is out (server/app.ts).
  const hookToServer = scenario.preStop.kind === 'httpGet' && scenario.preStop.port === undefined;
  const hookRequestEndsAt = !hookToServer
    ? null
    : observed
      ? (observed.hookRequestStartAt ?? termAt - Math.min(hookDurationSeconds(scenario.preStop), grace)) +
        hookDurationSeconds(scenario.preStop)
      : trigger.at + hookDurationSeconds(scenario.preStop);
  const heldByHook = hookRequestEndsAt !== null && hookRequestEndsAt > termAt;
  const drainedAt = Math.max(termAt, workEndsAt, heldByHook ? hookRequestEndsAt : Number.NEGATIVE_INFINITY);
  const exitsItself = completed && drainedAt <= killAt;
  // Hook and kill are both counted from the kubelet's start: their distance has no reaction window.
  const margin = heldByHook
    ? Math.min(
        marginTo(killAt, killEarliest),
        Math.abs(hookRequestEndsAt - killAt),
        Math.abs(hookRequestEndsAt - killEarliest),
      )
    : marginTo(killAt, killEarliest);
  const why = !completed
    ? `work would end at ${fmt(workEndsAt)}s, after the kill: 137`
    : exitsItself
      ? `work ends at ${fmt(workEndsAt)}s, before the kill: exit 0`
      : `work ends at ${fmt(workEndsAt)}s, but the httpGet hook's request, still open until ${fmt(hookRequestEndsAt!)}s, keeps the draining server alive past the kill: 137`;
  return {
    cause: trigger.cause,
    deadlineAt,
    podStatus: statusFor(exitsItself ? 0 : 137),
    graceSeconds: grace,
    hookEndsAt,
    termAt,
    killAt,
    killEarliestAt: killEarliest,
    exitAt: exitsItself ? drainedAt : killAt,
    resolutionSeconds,
    basis,
    terms,
    outcome: completed ? 'completed' : 'cut',
    exitCode: exitsItself ? 0 : 137,
    reason: exitsItself ? 'Completed' : 'Error',
    kubeletBeganAt,
    workEndsAt,
    marginSeconds: margin,
    steps: [...steps, why],
  };
}
