// fidelity.md: per scenario, both sides and their difference.
import {
  compareRule,
  MEDIAN_TOLERANCE_SECONDS,
  PROBER_REASON,
  TICKER_WINDOWS,
  type MatrixWide,
  type ScenarioComparison,
  type SideResult,
} from './compare.ts';
import type { EdgeComparison } from './edge-compare.ts';
import { renderEdgeSection } from './edge-report.ts';
import { DIED_TWIN, OFFSET_LABELS, OFFSETS, type OffsetName, type SideFile } from './summary.ts';

const seconds = (v: number) => `${v.toFixed(2)}s`;

const offsetText = (s: { median: number; min: number; max: number; n: number }) =>
  `${seconds(s.median)} (${seconds(s.min)}–${seconds(s.max)}, n=${s.n})`;

function offsetCell(side: SideResult | null, name: keyof SideResult['offsets']): string {
  const s = side?.offsets[name];
  return s ? offsetText(s) : '–';
}

function difference(c: ScenarioComparison, name: keyof SideResult['offsets']): string {
  const [a, b] = [c.sim?.offsets[name], c.node?.offsets[name]];
  if (a && b && !c.compared.includes(name)) return 'not compared';
  const window = TICKER_WINDOWS[name];
  if (a && b && window) {
    const inside = (v: { min: number; max: number }) => v.min >= window.from && v.max <= window.to;
    return `${inside(a) && inside(b) ? 'both within' : 'not both within'} ${window.from}–${window.to.toFixed(1)}s`;
  }
  return a && b ? `${a.median - b.median >= 0 ? '+' : ''}${(a.median - b.median).toFixed(2)}s` : '';
}
const SUMMARY_OFFSETS = ['hookStart', 'term', 'ended', 'deleted'] as const;
/** Windows only the 'reaction' rule (1.35+) judges by. */
const REACTION_RULE_WINDOWS = new Set(['reaction', 'endedToLogEnd', 'releasedToDeleted']);
/** The summary table's four offsets for one scenario, under its rule. */
function summaryOffsets(c: ScenarioComparison): (keyof SideResult['offsets'])[] {
  // An end judged by the container's death shows its death.
  const judged = (name: OffsetName): OffsetName => {
    const twin = DIED_TWIN[name];
    return twin && c.compared.includes(twin) ? twin : name;
  };
  if (c.rule === 'delete') return SUMMARY_OFFSETS.map(judged);
  const end =
    (['deleted', 'endedToLogEnd', 'endedToDeleted'] as const).find((n) => c.compared.includes(n)) ?? 'endedToDeleted';
  return [
    'reaction',
    'reactionToTerm',
    judged(
      c.compared.includes('reactionToEnded') || c.compared.includes('reactionToDied') ? 'reactionToEnded' : 'ended',
    ),
    end,
  ];
}
const RULE_TEXT = {
  delete:
    'Offsets are seconds after the harness issued the delete: median (min–max, n); a pod the kubelet ended on its own before the delete (activeDeadlineSeconds) is timed from its deadline and its verdict instead.',
  reaction:
    "From 1.35 the kubelet reacts (starts the hook, else sends TERM) at once or at the end of the next one or two relists, as the pod worker is idle or waiting at the delete (from 1.36 the on-demand relist leaves it idle at most deletes): that reaction is judged by its window, and what follows is timed from it (reaction→TERM, reaction→container ended for a container that was cut) or from the container's end: to the end of its log stream, which the kubelet's removal of the dead container ends (or its log reader's next look), and from the harness's removal of its finalizer to DELETED (later only if the kubelet's own delete is), leaving out the harness's round trips in between (records without the log's end: container ended→DELETED); a container that completed on its own is timed from the delete (its work ran from the request). Offsets are seconds: median (min–max, n); a pod the kubelet ended on its own before the delete (activeDeadlineSeconds) is timed from its deadline and its verdict instead.",
};

interface HookFigures {
  lag: { sim: string; node: string };
  own: { sim: string; node: string };
}

export function renderFidelity(
  comparisons: ScenarioComparison[],
  matrixWide: MatrixWide[],
  sim: SideFile,
  node: SideFile,
  hook: HookFigures,
  edge: EdgeComparison[] = [],
): string {
  const agreeing = comparisons.filter((c) => !c.disagreements.length).length;
  const edgeAgreeing = edge.filter((c) => !c.disagreements.length).length;
  const rule = comparisons[0]?.rule ?? compareRule(sim, node);
  const lines = [
    `# Fidelity: the simulated cluster against the real node${node.runs.length ? ` (Kubernetes ${node.cluster})` : ''}`,
    '',
    `Written by \`npm run fidelity\`. ${[sim, node].map((f) => `${f.side === 'sim' ? 'Simulated side' : 'Real side'}: ${f.runs.length ? `${f.cluster}, recorded ${f.recordedAt}` : 'not recorded'}`).join('. ')}.`,
    `Each scenario ran ${Math.max(0, ...comparisons.map((c) => Math.max(c.sim?.runs ?? 0, c.node?.runs ?? 0)))} times per side. ${RULE_TEXT[rule]} The sides disagree when outcome, exit code, reason, event reasons, a sidecar's kind, exit code and reason, or a retry scenario's attempts (each one's pod and end) and the ledger's effects differ (${PROBER_REASON}, the readiness prober's, only where every run had the lab port closed for a probe period while the container ran: elsewhere its ticker's phase, or at start-up its first run's race with the status manager, decides it), or a median differs by more than ${MEDIAN_TOLERANCE_SECONDS * 1000} ms; an offset a kubelet ticker's phase decides (${Object.entries(
      TICKER_WINDOWS,
    )
      .filter(([n]) => rule === 'reaction' || !REACTION_RULE_WINDOWS.has(n))
      .map(([n, w]) => `${OFFSET_LABELS[n as keyof typeof OFFSET_LABELS]}: ${w!.why}`)
      .join(
        '; ',
      )}) must instead fall, on every run of both sides, inside that ticker's period plus the same tolerance. A container's end is judged by its death where both sides know it on every run (its own exit line, else the runtime's SIGKILL: the simulator's record, containerd's "Kill container" on the node), and the runtime's teardown from that death to the end seen (StopContainer's exit handling, StopPodSandbox, the status write), which the node's own load stretches, over the whole matrix; an end nothing dates (the OOM killer's) by the end seen.`,
    '',
    edge.length
      ? `**${agreeing + edgeAgreeing} of ${comparisons.length + edge.length} scenarios agree** (the pod scenarios ${agreeing} of ${comparisons.length}, the edge scenarios ${edgeAgreeing} of ${edge.length}: their own section below).`
      : `**${agreeing} of ${comparisons.length} scenarios agree.**`,
    '',
    ...(matrixWide.length
      ? [
          `Across the matrix (every run of each side; the pod's end is one kubelet mechanism in every scenario, so its medians must also agree within ${MEDIAN_TOLERANCE_SECONDS * 1000} ms): ${matrixWide.map((m) => `${OFFSET_LABELS[m.offset]} sim ${m.sim ? offsetText(m.sim) : '–'}, node ${m.node ? offsetText(m.node) : '–'}: ${m.disagrees ? '**disagree**' : 'agree'}`).join('; ')}.`,
          '',
        ]
      : []),
    `Exec hook: from the kubelet's launch to the hook's first line (on the node this includes the CRI exec through containerd and runc): sim ${hook.lag.sim}; real node ${hook.lag.node}. The hook process's age at that line, counted from the process's creation (on the node that includes runc init before the hook is exec'd; 10 ms steps): sim ${hook.own.sim}; real node ${hook.own.node}.`,
    '',
    `| scenario | agree | sim: outcome / exit / reason | node: outcome / exit / reason | ${rule === 'delete' ? 'Δ hook start | Δ TERM | Δ ended (or died) | Δ DELETED' : `reaction | Δ reaction→TERM | Δ ended (or died) | Δ ended→${comparisons.some((c) => c.compared.includes('endedToLogEnd')) ? 'log end' : 'DELETED'}`} |`,
    '| --- | --- | --- | --- | --- | --- | --- | --- |',
    ...comparisons.map(
      (c) =>
        `| ${c.scenario} | ${c.disagreements.length ? 'no' : 'yes'} | ${brief(c.sim)} | ${brief(c.node)} | ${summaryOffsets(
          c,
        )
          .map((n) => difference(c, n) || '–')
          .join(' | ')} |`,
    ),
  ];
  for (const c of comparisons) {
    lines.push('', `## ${c.scenario}`, '');
    if (c.disagreements.length) lines.push(`Disagreements: ${c.disagreements.join('; ')}.`, '');
    lines.push('| | simulated | real node | difference |', '| --- | --- | --- | --- |');
    for (const field of [
      'outcome',
      'exitCode',
      'reason',
      'phase',
      'eventReasons',
      ...(c.sim?.sidecar || c.node?.sidecar ? (['sidecar'] as const) : []),
      ...(c.sim?.retries || c.node?.retries ? (['retries'] as const) : []),
    ] as const) {
      const same = c.sim?.[field] === c.node?.[field];
      lines.push(
        `| ${field} | ${String(c.sim?.[field] ?? '–')} | ${String(c.node?.[field] ?? '–')} | ${same ? 'same' : field === 'eventReasons' && !c.proberCompared ? 'not compared' : 'differs'} |`,
      );
    }
    if (!c.proberCompared) {
      const same = c.sim?.eventReasonsBesidesProber === c.node?.eventReasonsBesidesProber;
      lines.push(
        `| eventReasons besides ${PROBER_REASON} (compared: no drain held the port closed for a probe period on every run) | ${c.sim?.eventReasonsBesidesProber ?? '–'} | ${c.node?.eventReasonsBesidesProber ?? '–'} | ${same ? 'same' : 'differs'} |`,
      );
    }
    for (const name of OFFSETS.filter((n) => c.sim?.offsets[n] || c.node?.offsets[n] || summaryOffsets(c).includes(n)))
      lines.push(
        `| ${OFFSET_LABELS[name]} | ${offsetCell(c.sim, name)} | ${offsetCell(c.node, name)} | ${difference(c, name)} |`,
      );
    const incomplete = [
      ...(c.sim?.incomplete ?? []).map((x) => `sim ${x}`),
      ...(c.node?.incomplete ?? []).map((x) => `node ${x}`),
    ];
    if (incomplete.length) lines.push('', `Incomplete runs: ${incomplete.join('; ')}.`);
  }
  lines.push(...renderEdgeSection(edge));
  return `${lines.join('\n')}\n`;
}

function brief(side: SideResult | null): string {
  return side ? `${side.outcome} / ${side.exitCode ?? '–'} / ${side.reason ?? '–'}` : '–';
}
