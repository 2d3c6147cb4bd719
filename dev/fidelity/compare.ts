// The two sides side by side: per scenario, the categorical results (the value most repetitions
// gave) and the median and spread of each offset. Pure.
import { REAL_NODE_TIMING } from '../../cluster/sim/pleg.ts';
import { DIED_TWIN, OFFSETS, type OffsetName, type RunSummary, type SideFile } from './summary.ts';

/** Two medians further apart than this disagree (seconds). */
export const MEDIAN_TOLERANCE_SECONDS = 0.3;

/**
 * Offsets that a kubelet ticker's phase decides, uniform over its period on a real node: the sync
 * ticker finds an exceeded deadline, then the pod worker waits for the next PLEG relist before it
 * kills. Medians of three draws from one period differ by more than 300 ms about a third of the
 * time on the same kubelet, so every run of both sides must instead fall inside the period the
 * mechanism allows (plus the same tolerance).
 */
const RELIST_S = (REAL_NODE_TIMING.relistPeriodMs + REAL_NODE_TIMING.relistDurationMs) / 1000;

export const TICKER_WINDOWS: Partial<Record<OffsetName, { from: number; to: number; why: string }>> = {
  // From 1.36 (PLEGOnDemandRelist) the pod worker is mostly idle at the delete, so the relist decides the reaction
  // (pod_workers.go podWorkerLoop waits in podCache.GetNewerThan(uid, lastSyncTime), container/cache.go
  // getIfNewerThan): at once if a global relist started since the pod's last sync, else at the end of the next,
  // and after two if a sync was waiting for its relist (GetNewerThan takes no context: the cancelled sync still
  // takes its relist, then SyncTerminatingPod waits for the next; the node's --v=4 log shows both).
  reaction: {
    from: -MEDIAN_TOLERANCE_SECONDS,
    to: 2 * RELIST_S + MEDIAN_TOLERANCE_SECONDS,
    why: 'one or two PLEG relists',
  },
  verdict: { from: 0, to: REAL_NODE_TIMING.syncTickMs / 1000 + MEDIAN_TOLERANCE_SECONDS, why: 'the sync ticker' },
  // TERM is the container's clock and the verdict the watch's arrival: a relist just after the verdict's sync can put TERM first.
  verdictToTerm: { from: -MEDIAN_TOLERANCE_SECONDS, to: RELIST_S + MEDIAN_TOLERANCE_SECONDS, why: 'a PLEG relist' },
  // The follow ends at the kubelet's removal of the dead container: cleanUpContainersInPod on a ContainerDied
  // (kubelet.go:2796-2799) once the worker has terminated the pod (ShouldPodContentBeRemoved), so at the first
  // relist after killPod's StopPodSandbox (the sandbox's own ContainerDied when the container's came too early),
  // which the end seen follows by the status write; or sooner at the log reader's look a second after the last
  // line (cri-client logs.go waitLogs), which can come before the end is seen (the v1.37.2 node, 2026-12-02, 57
  // runs: the follow ended a median 14 ms after containerd's RemoveContainer, or up to 1.0 s before it at the look).
  endedToLogEnd: {
    from: -RELIST_S - MEDIAN_TOLERANCE_SECONDS,
    to: RELIST_S + MEDIAN_TOLERANCE_SECONDS,
    why: "a PLEG relist or the log reader's look",
  },
  // DELETED waits for the later of the harness's release and the kubelet's own grace-0 delete, which follows
  // SyncTerminatedPod, and that waits for the first relist after the pod's termination (pod_workers.go
  // podWorkerLoop GetNewerThan): late only where the reader's look ended the follow before that relist (node: 9 of 57).
  releasedToDeleted: { from: -MEDIAN_TOLERANCE_SECONDS, to: RELIST_S + MEDIAN_TOLERANCE_SECONDS, why: 'a PLEG relist' },
};

/**
 * The pod's end is the same kubelet mechanism in every scenario, so its offsets are also compared over the whole
 * matrix: the median of every run of each side, within the tolerance (n≈57 a side: a relist phase no longer decides
 * it, while a per-scenario window would pass a side that always ends at the far edge).
 */
export const MATRIX_WIDE: OffsetName[] = ['endedToLogEnd', 'releasedToDeleted', 'diedToEnded'];

/**
 * An end is judged by the container's death where both sides know it on every run that saw the end (DIED_TWIN): the
 * kubelet's rules decide the death; the runtime's teardown after it, which the node's load stretches, is judged over
 * the whole matrix (MATRIX_WIDE's diedToEnded). Elsewhere (older records) by the end seen.
 */
export function byDeath(compared: OffsetName[], s: SideResult, n: SideResult): OffsetName[] {
  return compared.map((name) => {
    const twin = DIED_TWIN[name];
    const known = (r: SideResult) =>
      twin !== undefined && r.offsets[twin] !== null && r.offsets[twin]!.n === r.offsets[name]?.n;
    return twin && known(s) && known(n) ? twin : name;
  });
}

export interface MatrixWide {
  offset: OffsetName;
  sim: OffsetStats | null;
  node: OffsetStats | null;
  disagrees: boolean;
}

export function compareMatrixWide(sim: SideFile, node: SideFile): MatrixWide[] {
  const pooled = (file: SideFile, name: OffsetName) =>
    stats(
      file.runs
        .filter((r) => r.complete)
        .map((r) => r.offsets[name] ?? null)
        .filter((v): v is number => v !== null),
    );
  return MATRIX_WIDE.map((offset) => {
    const [a, b] = [pooled(sim, offset), pooled(node, offset)];
    return {
      offset,
      sim: a,
      node: b,
      disagrees: a !== null && b !== null ? Math.abs(a.median - b.median) > MEDIAN_TOLERANCE_SECONDS : a !== b,
    };
  }).filter((m) => m.sim || m.node);
}

/**
 * `Unhealthy` is the readiness prober's, a loop of its own (prober/worker.go run: a ticker of periodSeconds, reset by
 * every manual run). Whether a run records it is decided by that ticker's phase unless the lab port was closed for a
 * whole period while the container ran (a drain): at start-up the first manual run (prober_manager.go:364-369,
 * UpdatePodStatus during generateAPIPodStatus, kubelet.go:2108) races SyncPod's SetPodStatus (kubelet.go:2135):
 * reading the status before it, doProbe finds no container ID (worker.go doProbe) and the next probe comes a period
 * later, when the server listens (seen on the v1.37.2 node in 4 of 11 pods; the others failed once, 1 ms after
 * ContainerStarted); after the exit, a probe fails only if its tick falls before the status shows the end. So the
 * reason is compared only where every run of both sides had the port closed for a period plus the tolerance.
 */
export const PROBER_REASON = 'Unhealthy';
/** manifests/lab-pod.yaml readinessProbe.periodSeconds. */
export const PROBE_PERIOD_SECONDS = 1;

export function unhealthyCompared(...sides: RunSummary[][]): boolean {
  return sides.every(
    (runs) =>
      runs.length > 0 &&
      runs.every((r) => (r.portClosedSeconds ?? 0) >= PROBE_PERIOD_SECONDS + MEDIAN_TOLERANCE_SECONDS),
  );
}

/**
 * What each side's offsets are compared from. 'delete': every offset from the harness's delete (1.34: a sync was
 * waiting at every delete, so the reaction was two relists on every run of both sides, 1.69-2.02 s on the 1.34.4
 * node). 'reaction' (1.35+): the reaction by its window (the v1.35.4 node, 2026-12-02, without an on-demand relist:
 * 0.18-2.21 s over 42 runs, median 1.55; delete-relative medians agreed in 3 of 15 by chance), and what follows from the reaction
 * (the hook to TERM, a cut container's end) or from the container's end (its removal, comparedOffsets); a container that completed
 * on its own, by its work, is still timed from the delete.
 */
export type CompareRule = 'delete' | 'reaction';

export function compareRule(...files: SideFile[]): CompareRule {
  const minor = Math.max(...files.map((f) => Number(/^v1\.(\d+)\./.exec(f.cluster)?.[1] ?? 0)));
  return minor >= 35 ? 'reaction' : 'delete';
}

/**
 * The offsets a scenario is judged on, under a rule; `cut`: the container did not end by its own work; `logEnd`: a
 * side recorded when its log stream ended. Then the pod's end is judged by the kubelet's two parts (the container's
 * end → its removal, which ends the follow; the harness's release → DELETED) and not by DELETED from the container's
 * end or the delete, which carries the harness's own round trips between them (it reads the events and closes its
 * port-forward before it removes its finalizer). Records from before the field keep DELETED.
 */
export function comparedOffsets(
  rule: CompareRule,
  cut: boolean,
  reacted: boolean,
  logEnd: boolean,
  sidecar: { native: boolean } | null = null,
): OffsetName[] {
  const deadline: OffsetName[] = ['verdict', 'verdictToTerm', 'termToEnded'];
  // A regular sidecar gets TERM with the app, at the reaction; a native one after the app's end, which its work or the reaction decided.
  const sidecarTerm: OffsetName[] = !sidecar
    ? []
    : [rule === 'delete' || (sidecar.native && !cut) ? 'sidecarTerm' : 'reactionToSidecarTerm', 'sidecarTermToEnded'];
  if (rule === 'delete') return ['hookStart', 'term', 'ended', 'deleted', ...sidecarTerm, ...deadline];
  const kubeletEnd: OffsetName[] = ['endedToLogEnd', 'releasedToDeleted'];
  if (!reacted) return [...(logEnd ? kubeletEnd : ['deleted' as const]), ...deadline];
  return [
    'reaction',
    'reactionToTerm',
    cut ? 'reactionToEnded' : 'ended',
    ...sidecarTerm,
    ...(logEnd ? kubeletEnd : ['endedToDeleted' as const]),
  ];
}

export interface OffsetStats {
  median: number;
  min: number;
  max: number;
  n: number;
}

export interface SideResult {
  runs: number;
  incomplete: string[];
  outcome: string | null;
  exitCode: number | null;
  reason: string | null;
  phase: string | null;
  eventReasons: string;
  /** The reasons most runs gave without the prober's, for a scenario where a race decides it. */
  eventReasonsBesidesProber: string;
  /** The sidecar most runs had: native or regular, its exit code and reason; null for a pod without one. */
  sidecar: string | null;
  /** A retry scenario's attempts and the ledger's effects most runs gave; null for a scenario without retries. */
  retries: string | null;
  /** Most runs' app completed its request (its log's completed line): its end followed its work. */
  workCompleted: boolean;
  offsets: Record<OffsetName, OffsetStats | null>;
  hookLaunchLagMs: number[];
}

export interface ScenarioComparison {
  scenario: string;
  sim: SideResult | null;
  node: SideResult | null;
  disagreements: string[];
  rule: CompareRule;
  /** The offsets it was judged on. */
  compared: OffsetName[];
  /** Whether Unhealthy was among the event reasons compared (unhealthyCompared). */
  proberCompared: boolean;
}

function mostCommon<T>(values: T[]): T | null {
  const counts = new Map<string, { value: T; n: number }>();
  for (const value of values) {
    const key = JSON.stringify(value);
    counts.set(key, { value, n: (counts.get(key)?.n ?? 0) + 1 });
  }
  return [...counts.values()].sort((a, b) => b.n - a.n)[0]?.value ?? null;
}

export function stats(values: number[]): OffsetStats | null {
  if (!values.length) return null;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length / 2;
  const median = sorted.length % 2 ? sorted[Math.floor(mid)]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
  return { median, min: sorted[0]!, max: sorted.at(-1)!, n: sorted.length };
}

export function sideResult(runs: RunSummary[]): SideResult {
  const complete = runs.filter((r) => r.complete);
  const used = complete.length ? complete : runs;
  const offsets = Object.fromEntries(
    OFFSETS.map((name) => [
      name,
      stats(used.map((r) => r.offsets[name] ?? null).filter((v): v is number => v !== null)),
    ]),
  ) as SideResult['offsets'];
  return {
    runs: runs.length,
    incomplete: runs.filter((r) => !r.complete).map((r) => `#${r.repetition}: ${r.incompleteReason ?? 'incomplete'}`),
    outcome: mostCommon(used.map((r) => r.outcome)),
    exitCode: mostCommon(used.map((r) => r.exitCode)),
    reason: mostCommon(used.map((r) => r.reason)),
    phase: mostCommon(used.map((r) => r.phase)),
    eventReasons: mostCommon(used.map((r) => r.eventReasons.join(', '))) ?? '',
    eventReasonsBesidesProber:
      mostCommon(used.map((r) => r.eventReasons.filter((e) => e !== PROBER_REASON).join(', '))) ?? '',
    sidecar: mostCommon(
      used.map((r) =>
        r.sidecar
          ? `${r.sidecar.native ? 'native' : 'regular'} / ${r.sidecar.exitCode ?? '–'} / ${r.sidecar.reason ?? '–'}`
          : null,
      ),
    ),
    retries: mostCommon(used.map((r) => (r.retries ? `${r.retries.attempts}; ${r.retries.effects}` : null))),
    workCompleted: mostCommon(used.map((r) => r.workCompleted ?? r.outcome === 'completed')) ?? false,
    offsets,
    hookLaunchLagMs: used.map((r) => r.hookLaunchLagMs).filter((v): v is number => v !== null),
  };
}

export function compareSides(sim: SideFile, node: SideFile): ScenarioComparison[] {
  const names = [...new Set([...sim.runs, ...node.runs].map((r) => r.scenario))];
  const rule = compareRule(sim, node);
  return names.map((scenario) => {
    const simRuns = sim.runs.filter((r) => r.scenario === scenario);
    const nodeRuns = node.runs.filter((r) => r.scenario === scenario);
    const s = simRuns.length ? sideResult(simRuns) : null;
    const n = nodeRuns.length ? sideResult(nodeRuns) : null;
    const disagreements: string[] = [];
    // Cut: the app's end followed the kubelet's reaction, not its work (a request a proxy cut may have completed in the app).
    const first = n ?? s;
    const cut = first?.outcome === 'cut' && !first.workCompleted;
    const sidecar = first?.sidecar ? { native: first.sidecar.startsWith('native') } : null;
    const byEnd = comparedOffsets(
      rule,
      cut,
      Boolean(s?.offsets.reaction || n?.offsets.reaction),
      Boolean(s?.offsets.endedToLogEnd || n?.offsets.endedToLogEnd),
      sidecar,
    );
    const compared = s && n ? byDeath(byEnd, s, n) : byEnd;
    const proberCompared = unhealthyCompared(simRuns, nodeRuns);
    if (!s || !n) disagreements.push(`only the ${s ? 'simulated' : 'real'} side ran it`);
    else {
      const reasons = proberCompared ? 'eventReasons' : 'eventReasonsBesidesProber';
      for (const field of ['outcome', 'exitCode', 'reason', reasons, 'sidecar', 'retries'] as const) {
        if (s[field] !== n[field])
          disagreements.push(`${field}: sim ${JSON.stringify(s[field])}, node ${JSON.stringify(n[field])}`);
      }
      for (const name of compared) {
        const [a, b] = [s.offsets[name], n.offsets[name]];
        const window = TICKER_WINDOWS[name];
        if ((a === null) !== (b === null))
          disagreements.push(`${name}: seen only on the ${a ? 'simulated' : 'real'} side`);
        else if (a && b && window) {
          for (const [label, v] of [
            ['sim', a],
            ['node', b],
          ] as const) {
            if (v.min < window.from || v.max > window.to)
              disagreements.push(
                `${name}: ${label} ${v.min.toFixed(2)}s–${v.max.toFixed(2)}s, outside ${window.why}'s ${window.from}–${window.to.toFixed(2)}s`,
              );
          }
        } else if (a && b && Math.abs(a.median - b.median) > MEDIAN_TOLERANCE_SECONDS) {
          disagreements.push(`${name}: median ${a.median.toFixed(2)}s on the sim, ${b.median.toFixed(2)}s on the node`);
        }
      }
    }
    return { scenario, sim: s, node: n, disagreements, rule, compared, proberCompared };
  });
}
