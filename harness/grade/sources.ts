// How checks name and follow the evidence behind their facts (facts.ts): a log line, a watch event,
// a pod read, and what a citation points at.
import type { PodRead, StateCitation, WatchEvent } from '../observation/schema.ts';
import { carriesPod } from '../observation/timeline.ts';
import type { Facts, ShownState } from './facts.ts';

export { carriesPod };

export {
  type LabFields,
  type LabLine,
  type MalformedLabLine,
  parseLabLogLines,
  parseLogLineJson,
} from '../observation/timeline.ts';

export { type Facts, type ShownState, type StateSource, watchHadGap } from './facts.ts';

export const describeLine = (l: { line: number; event?: string }) =>
  `log line ${l.line}${l.event ? ` (${l.event})` : ''}`;
export const describeEvent = (e: { type: string; resourceVersion: string }) =>
  `watch event ${e.type}@${e.resourceVersion}`;
export const describeCitation = (c: StateCitation) =>
  c.kind === 'watch' ? describeEvent(c) : `pod read ${c.index} (resourceVersion ${c.resourceVersion ?? 'none'})`;

/** What a citation points at, or a sentence saying why it points at nothing acceptable. */
export function resolveState(
  { o }: Facts,
  c: StateCitation,
): { at: number; containers: ShownState[]; event?: WatchEvent; read?: PodRead } | string {
  if (c.kind === 'watch') {
    if (!carriesPod(c)) return `${describeEvent(c)}, which is a Status, not a pod: it shows no container state`;
    const matches = o.evidence.watchEvents.filter((e) => e.type === c.type && e.resourceVersion === c.resourceVersion);
    if (!matches.length) return `${describeEvent(c)} is not in the evidence`;
    const event = matches[0]!;
    return { at: event.receivedAt.mono, containers: event.containers, event };
  }
  const read = o.evidence.podReads[c.index];
  if (!read) return `pod read ${c.index} is not in the evidence`;
  if (read.resourceVersion !== c.resourceVersion)
    return `pod read ${c.index} has resourceVersion ${read.resourceVersion}, not ${c.resourceVersion}`;
  if (!read.found) return `pod read ${c.index} found no pod`;
  if (read.uid !== o.pod?.uid)
    return `pod read ${c.index} is of pod ${read.uid}, not the live pod ${o.pod?.uid ?? '(unknown)'}`;
  return { at: read.at.mono, containers: read.containers, read };
}
