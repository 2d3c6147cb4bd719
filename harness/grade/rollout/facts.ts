// What a rollout observation says about each pod, worked out once from its sources: the watch
// (created, Ready, deletion, end), the EndpointSlice watch (endpoint removed), the pod's own log
// (TERM, hook, exit) and its live read. Times are seconds from the template change.
import type { LiveRead, RolloutObservation, RolloutPodEvent } from '../../observation/rollout.ts';
import { type LabLine, parseLabLogLines, watchHadGap } from '../sources.ts';

export interface PodFacts {
  name: string;
  uid: string;
  templateHash: string | null;
  /** Made from the template before the change (old) or after it (new); null when it cannot be told. */
  revision: 'old' | 'new' | null;
  events: RolloutPodEvent[];
  created: number | null;
  ready: number | null;
  deletionSeen: number | null;
  endpointRemoved: number | null;
  term: number | null;
  termWall: number | null;
  hookStart: number | null;
  exitCode: number | null;
  ended: number | null;
  endedWall: number | null;
  deleted: number | null;
  live: LiveRead | null;
  /** When the harness's live read of it was answered (seconds, its clock). */
  liveReadAt: number | null;
  log: { lines: LabLine[]; whole: boolean } | null;
}

export function originOf(o: RolloutObservation): { mono: number; wall: number } | null {
  const t = o.timeline.templateChanged;
  return t ? { mono: t.mono, wall: Date.parse(t.wall) } : null;
}

export function podFacts(o: RolloutObservation): PodFacts[] {
  const apiWasAway = watchHadGap(o);
  const origin = originOf(o) ?? { mono: 0, wall: Date.parse(o.timeline.watchesEstablished?.wall ?? o.run.observedAt) };
  const fromMono = (mono: number) => (mono - origin.mono) / 1000;
  const fromWall = (time: string) => (Date.parse(time) - origin.wall) / 1000;
  // The old ReplicaSet is the one of the lowest revision; its hash marks the old pods.
  const revisions = new Map<string, number>();
  for (const e of o.evidence.replicaSetEvents)
    if (e.templateHash && e.revision && /^\d+$/.test(e.revision)) revisions.set(e.templateHash, Number(e.revision));
  const lowest = Math.min(...revisions.values());
  const uids = [...new Set(o.evidence.podEvents.filter((e) => e.role === 'lab').map((e) => e.uid))];
  return uids.map((uid) => {
    const events = o.evidence.podEvents.filter((e) => e.uid === uid);
    const first = events[0]!;
    const hash = first.templateHash;
    const createdMono = first.receivedAt.mono;
    // By its ReplicaSet's revision; without two revisions seen, by when the watch first saw it against the change.
    const byTime = o.timeline.templateChanged ? (createdMono < o.timeline.templateChanged.mono ? 'old' : 'new') : null;
    const revision =
      hash && revisions.has(hash) && revisions.size > 1 ? (revisions.get(hash) === lowest ? 'old' : 'new') : byTime;
    const readyEvent = events.find((e) => e.ready);
    const deletion = events.find((e) => e.deletionTimestamp !== null);
    const deleted = events.find((e) => e.type === 'DELETED');
    const terminated = events.find((e) => e.containers.some((c) => c.state === 'terminated'));
    // Removed: the first slice change after it was listed ready that shows it not ready or not at all.
    let wasReady = false;
    let endpointRemoved: number | null = null;
    for (const s of o.evidence.sliceEvents) {
      const ep = s.endpoints.find((x) => x.podUid === uid);
      if (ep?.ready) wasReady = true;
      else if (wasReady && endpointRemoved === null && (!ep || ep.ready === false || s.type === 'DELETED'))
        endpointRemoved = fromMono(s.receivedAt.mono);
    }
    const podLog = o.evidence.podLogs.find((l) => l.uid === uid);
    const lines = podLog ? parseLabLogLines(podLog.lines).lines : null;
    const term = lines?.find((l) => l.event === 'signal');
    const hookStart = lines?.find((l) => l.event === 'hook-start');
    const exit = lines?.find((l) => l.event === 'exit');
    const live = o.liveReads.find((r) => r.found && r.uid === uid) ?? null;
    const exitCode =
      terminated?.containers.find((c) => c.state === 'terminated')?.exitCode ?? exit?.fields.code ?? null;
    return {
      name: first.name,
      uid,
      templateHash: hash,
      revision,
      events,
      created: fromMono(createdMono),
      ready: readyEvent ? fromMono(readyEvent.receivedAt.mono) : null,
      deletionSeen: deletion ? fromMono(deletion.receivedAt.mono) : null,
      endpointRemoved,
      term: term ? fromWall(term.time) : null,
      termWall: term ? Date.parse(term.time) : null,
      hookStart: hookStart ? fromWall(hookStart.time) : null,
      exitCode,
      ended: exit ? fromWall(exit.time) : terminated ? fromMono(terminated.receivedAt.mono) : null,
      endedWall: exit ? Date.parse(exit.time) : terminated ? Date.parse(terminated.receivedAt.wall) : null,
      deleted: deleted ? fromMono(deleted.receivedAt.mono) : null,
      live,
      liveReadAt: live ? fromMono(live.at.mono) : null,
      // As for a pod scenario (sources.ts logComplete): a follow that ran through an API outage may have lost lines.
      log: podLog && lines ? { lines, whole: podLog.ended && podLog.error === null && !apiWasAway } : null,
    };
  });
}
