// The edge scenario's picture (issue 42): the report of the real node's recording through the real Traefik draws one
// failed request through the edge, each mark where its own source puts it — worked out here again from the
// observation's raw lines — its caption says the same times, to 10 ms, and no label prints over another.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { EdgeAccess } from '../../harness/edge/access-log.ts';
import { edgePicture } from '../../harness/grade/edge/picture.ts';
import type { LoadRecord } from '../../harness/grade/rollout/records.ts';
import { edgePictureCaption } from '../../harness/report/edge.ts';
import { FIXTURES, fontSizes, reportHtml, type TextBox, textBoxes, unescapeXml } from '../support/report-svg.ts';

const FILE = join(FIXTURES, 'edge/node-edge-no-prestop.observation.json');
const MS = 0.0101;

interface Raw {
  timeline: { templateChanged: { mono: number; wall: string } };
  evidence: {
    podEvents: { uid: string; name: string; deletionTimestamp: string | null; receivedAt: { mono: number } }[];
    sliceEvents: {
      receivedAt: { wall: string };
      endpoints: { podUid: string; addresses: string[]; ready: boolean }[];
    }[];
    podLogs: { uid: string; lines: { text: string }[] }[];
    loadLog: { lines: { text: string }[] };
  };
  edge: { accessLogs: { lines: { text: string }[] }[] };
}

/** The raw sources, each in seconds after the template change, as the observation holds them. */
function sources(o: Raw) {
  const wall0 = Date.parse(o.timeline.templateChanged.wall);
  const fromWall = (t: string) => (Date.parse(t) - wall0) / 1000;
  const json = (lines: { text: string }[]) =>
    lines.flatMap((l) => {
      try {
        return [JSON.parse(l.text) as Record<string, unknown>];
      } catch {
        return [];
      }
    });
  const access = json(o.edge.accessLogs.flatMap((l) => l.lines)).filter((l) => 'StartUTC' in l);
  const load = json(o.evidence.loadLog.lines).filter((l) => l.event === 'request');
  const uidAt = new Map<string, string>();
  for (const s of o.evidence.sliceEvents) for (const ep of s.endpoints) uidAt.set(ep.addresses[0]!, ep.podUid);
  const dropOf = (uid: string) => {
    let wasReady = false;
    for (const s of o.evidence.sliceEvents) {
      const ep = s.endpoints.find((x) => x.podUid === uid);
      if (ep?.ready) wasReady = true;
      else if (wasReady) return fromWall(s.receivedAt.wall);
    }
    return null;
  };
  return { fromWall, access, load, uidAt, dropOf };
}

/** Each mark of a chart: its label (from its title) and its start and end. */
const marksOf = (svg: string) =>
  [...svg.matchAll(/<g data-t="(-?[\d.]+) (-?[\d.]+)">[\s\S]*?<title>([\s\S]*?): -?[\d.]+s → /g)].map((m) => ({
    label: unescapeXml(m[3]!),
    start: Number(m[1]),
    end: Number(m[2]),
  }));

describe("an edge scenario's report", () => {
  it('draws one failed request through the edge, each mark at its own source’s time', async () => {
    const o = JSON.parse(readFileSync(FILE, 'utf8')) as Raw;
    const { fromWall, access, load, uidAt, dropOf } = sources(o);
    const html = await reportHtml([FILE]);
    const chart = html.match(
      /<svg [^>]*aria-label="timeline of request (L\d+) through the edge"[^>]*>([\s\S]*?)<\/svg>/,
    );
    expect(chart, 'the edge picture').not.toBeNull();
    const id = chart![1]!;
    const marks = marksOf(chart![2]!);
    const mark = (label: RegExp) => {
      const found = marks.filter((m) => label.test(m.label));
      expect(found.length, `one mark ${label}`).toBe(1);
      return found[0]!;
    };

    // The request: the load's line, and the edge's line with the same X-Termlab-Request.
    const line = load.find((l) => l.id === id)!;
    expect(line.outcome).not.toBe('completed');
    const edge = access.find((l) => l['request_X-Termlab-Request'] === line.requestId)!;
    const addr = edge.ServiceAddr as string;
    const uid = uidAt.get(addr.split(':')[0]!)!;
    const deletion = o.evidence.podEvents.find((e) => e.uid === uid && e.deletionTimestamp)!;
    const zero = (deletion.receivedAt.mono - o.timeline.templateChanged.mono) / 1000;
    const drop = dropOf(uid)!;
    const routed = fromWall(edge.StartUTC as string);
    const termLine = o.evidence.podLogs
      .find((l) => l.uid === uid)!
      .lines.map((l) => JSON.parse(l.text) as { event: string; time: string })
      .find((l) => l.event === 'signal')!;
    // The edge's lag as seen for this pod: to the last line it still sent there after the drop.
    const last = Math.max(
      ...access
        .filter((l) => l.ServiceAddr === addr && fromWall(l.StartUTC as string) >= drop)
        .map((l) => fromWall(l.StartUTC as string)),
    );
    // It is a failure of the edge's lag: the edge sent it after the slice dropped the pod; and the first such, by the edge's clock.
    expect(routed).toBeGreaterThan(drop);
    const failedIds = new Set(load.filter((l) => l.outcome !== 'completed').map((l) => l.requestId));
    const earlier = access.filter((l) => {
      const u = uidAt.get(String(l.ServiceAddr ?? '').split(':')[0]!);
      const d = u ? dropOf(u) : null;
      const t = fromWall(l.StartUTC as string);
      return failedIds.has(l['request_X-Termlab-Request']) && d !== null && t >= d + 0.05 && t < routed - 0.001;
    });
    expect(earlier.map((l) => l['request_X-Termlab-Request'])).toEqual([]);

    const near = (t: number, want: number, what: string) => expect(Math.abs(t - want), what).toBeLessThanOrEqual(MS);
    near(mark(/^deleted$/).start, 0, 'the deletion is 0');
    near(mark(/^endpoint ready=false$/).start, drop - zero, 'the EndpointSlice drop');
    const sent = mark(new RegExp(`^${id} sent to ${addr.replaceAll('.', '\\.')}$`));
    near(sent.start, routed - zero, "the edge's StartUTC");
    near(mark(/^TERM$/).start, fromWall(termLine.time) - zero, "the pod's TERM");
    const request = mark(new RegExp(`^${id}$`));
    near(request.start, fromWall((line.sent as { time: string }).time) - zero, "the load's sent");
    near(request.end, fromWall((line.ended as { time: string }).time) - zero, "the load's ended");
    const failed = mark(new RegExp(`^${line.status} · edge ${edge.DownstreamStatus} · `));
    near(failed.start, request.end, 'the failure at the load’s end');
    const lag = mark(/^lag /);
    near(lag.start, drop - zero, "the lag's start: the drop");
    near(lag.end, last - zero, "the lag's end: the last line to this pod");
    near(mark(/the last to this pod$/).start, last - zero, 'the last request to the pod');
  });

  it('says in its caption what the picture shows, with the same times', async () => {
    const html = await reportHtml([FILE]);
    const svg = html.match(/aria-label="timeline of request L\d+ through the edge"[^>]*>([\s\S]*?)<\/svg>/)![1]!;
    const caption = unescapeXml(html.match(/through the edge"[\s\S]*?<\/svg>\s*<p class="caption">([^<]*)<\/p>/)![1]!);
    const marks = marksOf(svg);
    const said = [...caption.matchAll(/\bat (-?\d+\.\d+)[ \u00a0]s\b/g)].map((m) => Number(m[1]));
    // The drop, TERM, the routing, the load's send and end, the last request to the pod.
    expect(said.length).toBeGreaterThanOrEqual(6);
    const off = said.filter((t) => !marks.some((m) => Math.abs(m.start - t) <= MS || Math.abs(m.end - t) <= MS));
    expect(off).toEqual([]);
    const lag = marks.find((m) => m.label.startsWith('lag '))!;
    expect(caption).toContain(`was ${(lag.end - lag.start).toFixed(2)}\u00a0s.`);
    expect(lag.label).toBe(`lag ${(lag.end - lag.start).toFixed(2)}\u00a0s`);
  });

  it('prints no label over another, nor over a mark', async () => {
    const html = await reportHtml([FILE]);
    const svg = html.match(/aria-label="timeline of request L\d+ through the edge"[^>]*>([\s\S]*?)<\/svg>/)![1]!;
    const boxes = textBoxes(svg, fontSizes(html));
    expect(boxes.length).toBeGreaterThan(10);
    const intersect = (a: TextBox, b: TextBox) => a.x0 < b.x1 && b.x0 < a.x1 && a.y0 < b.y1 && b.y0 < a.y1;
    const overlaps: string[] = [];
    boxes.forEach((a, i) => {
      for (const b of boxes.slice(i + 1)) if (intersect(a, b)) overlaps.push(`"${a.text}" × "${b.text}"`);
    });
    for (const [, cx, top] of svg.matchAll(/<path d="M(-?[\d.]+) (-?[\d.]+) l7 8/g)) {
      const m = { text: 'mark', x0: Number(cx) - 7, x1: Number(cx) + 7, y0: Number(top), y1: Number(top) + 16 };
      for (const b of boxes) if (intersect(m, b)) overlaps.push(`a mark at x ${cx} × "${b.text}"`);
    }
    expect(overlaps).toEqual([]);
  });
});

describe("the picture's words on who answered", () => {
  // One request the edge sent 0.12 s after the slice dropped the pod, as the simulated cluster records it.
  const wall0 = Date.parse('2026-12-07T01:00:00.000Z');
  const iso = (s: number) => new Date(wall0 + s * 1000).toISOString();
  const picture = (status: number, body: string) => {
    const access: EdgeAccess = {
      line: 0,
      startMs: wall0 + 1130,
      endMs: wall0 + 1132,
      status,
      originStatus: status,
      method: 'GET',
      path: '/work?ms=200&id=L292',
      host: null,
      upstream: '127.0.0.1:26474',
      router: 'r',
      retries: 0,
      requestId: 'run-load-L292',
      pathId: 'L292',
    };
    const record = {
      id: 'L292',
      sent: { time: iso(1.13) },
      ended: { time: iso(1.135) },
      status,
      errorCode: null,
      bodyHead: body,
    } as unknown as LoadRecord;
    const pods = [
      {
        name: 'web-1',
        ip: '127.0.0.1',
        port: 26474,
        endpoint: 'uid-1',
        deletion: 1,
        term: 0.98,
        exited: null,
        keepAliveTimeoutSeconds: 5,
      },
    ];
    const slice = [
      { at: 0, ip: 'uid-1', gone: false, ready: true },
      { at: 1.01, ip: 'uid-1', gone: false, ready: false },
    ];
    const p = edgePicture(
      [{ record, cause: 'edge-routed-to-removed-endpoint', access, pod: 'web-1' }],
      { entries: [access], malformed: [], skipped: 0 },
      { pods, slice },
      wall0,
    );
    expect(p).not.toBeNull();
    return edgePictureCaption(p!);
  };

  it("a 502 with Traefik's own body is the edge's error, not the pod's answer", () => {
    const caption = picture(502, 'Bad Gateway');
    expect(caption).toContain('nothing came from the pod');
    expect(caption).not.toContain("the pod's own answer");
  });
  it("a 503 with the app's body is the pod's own answer", () => {
    expect(picture(503, '{"event":"rejected","reason":"draining"}')).toContain(
      "OriginStatus 503 (the pod's own answer)",
    );
  });
});
