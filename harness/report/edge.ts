// An edge scenario's picture (issue 42): one failed request through the edge, one row per source, each mark
// labelled, and its caption in words with the same figures (issue 39: the picture and its text never disagree).
// Pure: the grade's EdgePicture in, rows for html.ts's timeline and the caption out. Times from the deletion.
import type { EdgePicture, TimelineBar } from '../grade/types.ts';

/** A mark or bar of a report's timeline; a picture's marks carry their own source and colour. */
export interface ChartBar {
  label: string;
  kind: TimelineBar['kind'];
  start: number;
  end: number;
  source: string;
  color?: string;
}

/** Seconds to 10 ms, the unit kept with its number when the caption wraps. */
const at = (s: number) => `${s.toFixed(2)}\u00a0s`;
/** The body's first line, cut for a label or a caption. */
const bodyHead = (body: string | null, chars: number) => {
  const line = (body ?? '').trim().split('\n')[0]!;
  return line.length <= chars ? line : `${line.slice(0, chars - 1)}…`;
};
const answer = (p: EdgePicture) => (p.status !== null ? `${p.status}` : (p.error ?? 'no answer'));

export function edgePictureRows(p: EdgePicture): {
  rows: { name: string; bars: ChartBar[] }[];
  axis: { min: number; max: number };
} {
  const point = (start: number, label: string, source: string, color: string): ChartBar => ({
    label,
    kind: 'effect',
    start,
    end: start,
    source,
    color,
  });
  const id = p.request.id;
  const rows = [
    { name: 'pod · watch', bars: [point(0, 'deleted', 'the pod watch', '#777')] },
    {
      name: 'EndpointSlice · watch',
      bars: [point(p.sliceDropped, `endpoint ${p.dropped}`, 'the EndpointSlice watch', '#1b7c83')],
    },
    {
      name: 'edge · access log',
      bars: [
        point(p.routed, `${id} sent to ${p.upstream}`, "the edge's access log (StartUTC, ServiceAddr)", '#8250df'),
        ...(p.lastRequest !== id && p.lastRouted !== p.routed
          ? [
              point(
                p.lastRouted,
                `${p.lastRequest ?? 'last'}: the last to this pod`,
                "the edge's access log",
                '#8250df',
              ),
            ]
          : []),
      ],
    },
    {
      name: "edge's lag",
      bars: [
        {
          label: `lag ${at(p.lastRouted - p.sliceDropped)}`,
          kind: 'effect' as const,
          start: p.sliceDropped,
          end: p.lastRouted,
          source: 'the EndpointSlice watch and the access log',
          color: '#f2c66d',
        },
      ],
    },
    {
      name: 'pod · its log',
      bars: p.term === null ? [] : [point(p.term, 'TERM', "the pod's log", '#d9480f')],
    },
    {
      name: 'load · its line',
      bars: [
        {
          label: id,
          kind: 'request' as const,
          start: p.sent,
          end: p.ended,
          source: "the load's line",
          color: '#2f6fdf',
        },
        point(
          p.ended,
          `${answer(p)} · edge ${p.edgeStatus} · ${bodyHead(p.body, 56)}`,
          "the load's line and the edge's DownstreamStatus",
          '#cf222e',
        ),
      ],
    },
  ];
  const times = rows.flatMap((r) => r.bars.flatMap((b) => [b.start, b.end]));
  return { rows, axis: { min: Math.min(0, ...times), max: Math.max(...times) + 0.25 } };
}

/** The picture in words: every time it prints is a mark of the chart (test/grade/edge-picture.test.ts). */
export function edgePictureCaption(p: EdgePicture): string {
  const id = p.request.id;
  const origin = p.podAnswered
    ? `OriginStatus ${p.originStatus} (the pod's own answer)`
    : p.originStatus === null
      ? 'no OriginStatus (nothing from the pod)'
      : `OriginStatus ${p.originStatus} with the edge's own error body: nothing came from the pod`;
  const last =
    p.lastRequest === id
      ? `${id} was the last request the edge sent it`
      : `The edge kept sending this pod requests until ${p.lastRequest ?? 'its last'} at ${at(p.lastRouted)}`;
  return [
    `Request ${id} (${p.request.method} ${p.request.path}), the first that failed to the edge's lag.`,
    `Time 0 is when the pod watch saw ${p.pod} deleted (${at(p.deletionAfterChange)} after the template change).`,
    `The EndpointSlice watch saw its endpoint ${p.dropped} at ${at(p.sliceDropped)};`,
    p.term === null ? 'the pod logged no TERM;' : `the pod logged TERM at ${at(p.term)};`,
    `the edge's access log has ${id} sent to ${p.upstream} (that pod) at ${at(p.routed)}, ${at(p.routed - p.sliceDropped)} after the drop.`,
    `The load sent it at ${at(p.sent)} and got ${answer(p)} at ${at(p.ended)}${p.body ? ` (body ${bodyHead(p.body, 60)})` : ''};`,
    `the edge logged DownstreamStatus ${p.edgeStatus}, ${origin}.`,
    `${last}: its lag for this pod, from the drop, was ${at(p.lastRouted - p.sliceDropped)}.`,
  ].join(' ');
}
