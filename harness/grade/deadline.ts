// The pod's active deadline (pkg/kubelet/active_deadline.go) as the evidence places it, and the
// cross-examination of the status the kubelet gives a pod it ends for it: phase Failed, reason
// DeadlineExceeded and its message, written (mergePodStatus) only once no container can run and
// never before startTime + activeDeadlineSeconds on the node's clock.
import { oneLine } from '../../lib/terminal.ts';
import { podDeadlineSeconds } from '../safety/deadline.ts';
import { anchor } from './kubelet-times.ts';
import { carriesPod, describeCitation } from './sources.ts';
import { DEADLINE_EXCEEDED, type DeadlineTiming, type KubeletRules, type Prediction } from './theory.ts';
import { fail, inconclusive, pass, type Check } from './types.ts';
import type { Facts } from './facts.ts';
import type { StateCitation } from '../observation/schema.ts';
import { wallMs } from './wall-time.ts';

/** Rounding of the lab's millisecond times and of the harness's clock mapping. */
const CLOCK_SLACK_MS = 50;

/** The activeDeadlineSeconds the runner renders for a scenario (scenario/render.ts): its own, capped by the safety net. */
const renderedDeadline = (f: Facts) =>
  Math.min(podDeadlineSeconds(f.o.scenario), f.o.scenario.activeDeadlineSeconds ?? Number.POSITIVE_INFINITY);

/** The live pod's activeDeadlineSeconds; in a file before version 4, the one the runner rendered from the scenario. */
function deadlineSecondsOf(f: Facts): number | null {
  const recorded = f.o.pod?.activeDeadlineSeconds;
  return recorded !== undefined ? recorded : renderedDeadline(f);
}

/** status.startTime as the watch showed it (the kubelet sets it once), or null. */
const startTimeOf = (f: Facts) => f.o.evidence.watchEvents.find((e) => carriesPod(e) && e.startTime)?.startTime ?? null;

/** The delete on the node's clock (wall ms): the server's accepted line plus the delay, else the API's own deletion stamp. */
function deleteOnNodeMs(f: Facts): number | null {
  const a = anchor(f);
  if (a) return a.deleteWallMs;
  const ack = f.timeline.deleteAcknowledged;
  return ack ? wallMs(ack.deletionTimestamp) - ack.deletionGracePeriodSeconds * 1000 : null;
}

/** Where the pod's active deadline passes, in seconds after the delete; null when the pod has none. */
export function observedDeadline(f: Facts): DeadlineTiming | null {
  const seconds = deadlineSecondsOf(f);
  if (seconds === null) return null;
  const start = startTimeOf(f);
  const deleteMs = deleteOnNodeMs(f);
  const startMs = start === null ? Number.NaN : wallMs(start);
  const ack = f.timeline.deleteAcknowledged;
  const takenMs = ack ? wallMs(ack.deletionTimestamp) - ack.deletionGracePeriodSeconds * 1000 : Number.NaN;
  const deleteTakenAt = deleteMs !== null && Number.isFinite(takenMs) ? (takenMs - deleteMs) / 1000 : null;
  if (deleteMs === null || !Number.isFinite(startMs) || !Number.isFinite(deleteMs))
    return { seconds, passesAt: null, deleteTakenAt };
  return { seconds, passesAt: (startMs + seconds * 1000 - deleteMs) / 1000, deleteTakenAt };
}

interface StatusShown {
  citation: StateCitation;
  receivedAt: number;
  phase: string | null;
  reason: string | null | undefined;
  message: string | null | undefined;
  running: boolean;
}

/** Every watch event and found pod read of this pod, with the status it showed, in the order received. */
function statuses({ o }: Facts): StatusShown[] {
  const running = (containers: { state: string }[]) => containers.some((c) => c.state !== 'terminated');
  const fromWatch = o.evidence.watchEvents.filter(carriesPod).map(
    (e): StatusShown => ({
      citation: { kind: 'watch', type: e.type, resourceVersion: e.resourceVersion },
      receivedAt: e.receivedAt.mono,
      phase: e.phase,
      reason: e.statusReason,
      message: e.statusMessage,
      running: running(e.containers),
    }),
  );
  const fromReads = o.evidence.podReads.flatMap((r, index) =>
    r.found && r.uid === o.pod?.uid
      ? [
          {
            citation: { kind: 'read', index, resourceVersion: r.resourceVersion } as StateCitation,
            receivedAt: r.at.mono,
            phase: r.phase,
            reason: r.statusReason,
            message: r.statusMessage,
            running: running(r.containers),
          },
        ]
      : [],
  );
  return [...fromWatch, ...fromReads].sort((a, b) => a.receivedAt - b.receivedAt);
}

const secs = (x: number) => `${x.toFixed(3)}s`;

/** startTime is set once, before the containers start and before the server accepted the request. */
function startTimeProblem({ o, lab }: Facts): string | null {
  const times = [
    ...new Set(o.evidence.watchEvents.filter((e) => carriesPod(e) && e.startTime).map((e) => e.startTime!)),
  ];
  if (times.length > 1)
    return `the watch shows two start times (${times.slice(0, 2).map(oneLine).join(', ')}), but the kubelet sets status.startTime once`;
  const start = times[0];
  if (!start) return null;
  const startMs = wallMs(start);
  if (o.finalState?.startedAt && wallMs(o.finalState.startedAt) < startMs)
    return `the container started (${o.finalState.startedAt}) before the pod's startTime (${oneLine(start)})`;
  const accepted = lab.find((l) => l.event === 'accepted' && l.fields.id === o.request.id);
  if (accepted && wallMs(accepted.time) + CLOCK_SLACK_MS < startMs)
    return `the server accepted the request (${accepted.time}) before the pod's startTime (${oneLine(start)})`;
  return null;
}

/**
 * The pod's own status against the kubelet's rules: DeadlineExceeded only with phase Failed and the
 * kubelet's message, once no container runs, received no earlier than the deadline passed. Any other
 * reason is the kubelet's (or a controller's) own cause the model does not know.
 */
export function podStatusEvidence(f: Facts, deadline: DeadlineTiming | null): Check {
  const id = 'evidence.pod-status';
  const start = startTimeProblem(f);
  if (start) return fail(id, start);
  const live = f.o.pod?.activeDeadlineSeconds;
  if (live !== undefined && live !== renderedDeadline(f))
    return fail(
      id,
      `the live pod's activeDeadlineSeconds is ${live === null ? 'unset' : `${live}s`}, but termlab gives this scenario's pod ${renderedDeadline(f)}s`,
    );
  const a = anchor(f);
  const startTime = startTimeOf(f);
  for (const s of statuses(f)) {
    if (s.reason === undefined || s.reason === null) {
      if (s.message !== undefined && s.message !== null)
        return fail(
          id,
          `${describeCitation(s.citation)} carries a status message (${oneLine(s.message)}) with no reason, which the kubelet never writes`,
        );
      continue;
    }
    const shown = `${describeCitation(s.citation)} shows reason ${oneLine(s.reason)}`;
    if (s.reason !== DEADLINE_EXCEEDED.reason) continue;
    if (s.phase !== 'Failed')
      return fail(id, `${shown} with phase ${s.phase ?? 'none'}, but the kubelet writes it only with phase Failed`);
    if (s.message !== DEADLINE_EXCEEDED.message)
      return fail(
        id,
        `${shown} with the message ${JSON.stringify(oneLine(s.message ?? ''))}, not the kubelet's "${DEADLINE_EXCEEDED.message}"`,
      );
    if (s.running)
      return fail(
        id,
        `${shown} while a container still runs, but the kubelet holds the terminal phase and its reason back until none can (mergePodStatus)`,
      );
    if (deadline === null) return fail(id, `${shown}, but the pod has no activeDeadlineSeconds`);
    if (startTime === null)
      return fail(id, `${shown}, but no watch event shows the pod's startTime, from which its deadline is counted`);
    const passesMs = wallMs(startTime) + deadline.seconds * 1000;
    // The harness received the status after it was written: on the node's clock, no later than this.
    const receivedBy = a ? s.receivedAt + a.harnessToServerMs + a.rttMs + CLOCK_SLACK_MS : null;
    if (receivedBy !== null && receivedBy < passesMs)
      return fail(
        id,
        `${shown}, received ${secs((passesMs - receivedBy) / 1000)} before the deadline passed (startTime ${oneLine(startTime)} + ${deadline.seconds}s), but the kubelet gives it only after`,
      );
  }
  const event = f.o.evidence.podEvents.find((e) => e.reason === DEADLINE_EXCEEDED.reason);
  if (event && deadline !== null && startTime !== null && event.time !== null) {
    // Events carry whole seconds: the second of the kubelet's verdict, no earlier than the deadline's.
    const passesMs = wallMs(startTime) + deadline.seconds * 1000;
    if (wallMs(event.time) + 1000 <= passesMs)
      return fail(
        id,
        `the ${DEADLINE_EXCEEDED.reason} event (${oneLine(event.time)}) is before the deadline passed (startTime ${oneLine(startTime)} + ${deadline.seconds}s)`,
      );
  }
  if (event && deadline === null)
    return fail(id, `the pod's events have ${DEADLINE_EXCEEDED.reason}, but the pod has no activeDeadlineSeconds`);
  return pass(
    id,
    statuses(f).some((s) => s.reason !== undefined)
      ? "the pod's status reasons are ones the kubelet gives, when it gives them"
      : 'no pod status reason on record (a file before version 4)',
  );
}

/** The status the pod ended with: the last watch event or pod read showing a terminal phase. */
const terminalStatus = (f: Facts) =>
  statuses(f)
    .filter((s) => s.phase === 'Succeeded' || s.phase === 'Failed')
    .at(-1) ?? null;

/**
 * A deadline that ended the pod before the delete but is termlab's safety net (work + delay + hook +
 * grace + 60 s), not the scenario's own: the harness's own delays (a loaded API, a slow port-forward)
 * outlasted it, so the run tested nothing of the grace. Such a try is run again.
 */
export function safetyNetEnded(f: Facts, p: Prediction): string | null {
  if (p.cause !== 'deadline') return null;
  const seconds = deadlineSecondsOf(f);
  const own = f.o.scenario.activeDeadlineSeconds;
  if (own !== undefined && seconds === own) return null;
  const { podReady, requestAccepted } = f.o.timeline;
  const slow =
    podReady && requestAccepted
      ? `; the harness took ${secs((requestAccepted.at.mono - podReady.at.mono) / 1000)} from Ready to the request's acceptance`
      : '';
  return `the pod outlived termlab's safety deadline (activeDeadlineSeconds ${seconds}s) before the delete${slow}: the harness's own delays ended it, not the grace; run it again`;
}

/**
 * The pod's end against the model: ended for its deadline (Failed, DeadlineExceeded) or by the delete.
 * `rules`: the kubelet's of the cluster's minor (theory.ts rulesFor), whose deadline reaction makes a race.
 */
export function podStatusOutcome(f: Facts, p: Prediction, deadline: DeadlineTiming | null, rules: KubeletRules): Check {
  const id = 'outcome.pod-status';
  const net = safetyNetEnded(f, p);
  if (net) return inconclusive(id, net);
  const end = terminalStatus(f);
  const cause =
    p.cause === 'deadline'
      ? `the model has the deadline end the pod (${secs(-(p.deadlineAt ?? 0))} before the delete)`
      : 'the model has the delete end the pod';
  if (!end)
    return p.cause === 'deadline'
      ? inconclusive(
          id,
          `no watch event or pod read shows the pod's terminal phase: nothing shows what ended it; ${cause}`,
        )
      : pass(id, "no terminal pod phase seen; the container's end is graded on its own");
  if (end.reason === undefined)
    return p.cause === 'deadline'
      ? inconclusive(
          id,
          `the file has no record of the pod's status reason (a file before version 4): nothing shows the kubelet failed the pod for its deadline; ${cause}`,
        )
      : pass(id, 'no pod status reason on record (a file before version 4)');
  const shown = `${describeCitation(end.citation)} shows phase ${end.phase}${end.reason ? `, reason ${oneLine(end.reason)}` : ', no reason'}`;
  const deadlineEnded = end.reason === DEADLINE_EXCEEDED.reason;
  // The deadline passing within the kubelet's reaction of the delete: which sync acted first is timing.
  const taken = Math.max(0, deadline?.deleteTakenAt ?? 0);
  const raced =
    deadline !== null &&
    deadline.passesAt !== null &&
    deadline.passesAt > taken - rules.deadlineReactionSeconds &&
    deadline.passesAt < taken;
  if (p.cause === 'deadline') {
    if (deadlineEnded) return pass(id, `${shown}, as the model predicts: the kubelet ended the pod for its deadline`);
    if (raced)
      return inconclusive(
        id,
        `${shown}; the deadline passed within the kubelet's reaction of the API taking the delete: which one it acted on first is timing`,
      );
    return fail(
      id,
      `${shown}, but ${cause}: the kubelet gives such a pod phase Failed and reason ${DEADLINE_EXCEEDED.reason}`,
    );
  }
  if (deadlineEnded) {
    if (raced)
      return inconclusive(
        id,
        `${shown}: the deadline passed within the kubelet's reaction of the API taking the delete: which one ended the pod is timing`,
      );
    // Past its deadline while the delete's kill ran, the kubelet gives the pod the reason too (ShouldEvict on every status); the kill was the delete's.
    return pass(
      id,
      `${shown}: the deadline passed while the delete's kill ran; the kill, its grace and the exit are the delete's`,
    );
  }
  if (end.reason !== null)
    return inconclusive(
      id,
      `${shown}${end.message ? ` (${oneLine(end.message)})` : ''}: the kubelet or a controller ended the pod for a cause of its own, which the model does not know`,
    );
  return pass(id, `${shown}, as a pod the delete ended`);
}
