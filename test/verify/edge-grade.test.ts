// A verification through the edge, graded from the file: a real observation (the simulated cluster,
// no preStop) with the edge's access log written by hand beside it. Pod web-…-dhchn got TERM at
// 19:23:53.067 (its log), its deletion was seen at 53.084 and the EndpointSlice marked it not ready at
// 53.096. The expectations follow from those times and the rules, not from the code.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { gradeVerification } from '../../harness/verify/grade.ts';
import { terminalSummary } from '../../harness/verify/report.ts';
import type { VerificationObservation } from '../../harness/observation/verification.ts';

const fixture = () =>
  JSON.parse(
    readFileSync(new URL('./fixtures/rollout-no-prestop.verification.json', import.meta.url), 'utf8'),
  ) as VerificationObservation;

const A = '127.0.0.1:27217'; // web-74f8f8bbbc-dhchn, by its listening line
const access = (start: string, id: string | null, over: Record<string, unknown>) =>
  JSON.stringify({
    StartUTC: start,
    Duration: 1_000_000,
    DownstreamStatus: 502,
    RequestMethod: 'GET',
    RequestPath: '/work',
    RouterName: 'web@kubernetesgateway',
    ServiceAddr: A,
    ...(id ? { 'request_X-Termlab-Request': id } : {}),
    ...over,
  });
const line = (text: string) => ({ receivedAt: { mono: 0, wall: '2026-12-06T19:23:56.000Z' }, apiTime: null, text });

function throughEdge(o: VerificationObservation, lines: string[]): VerificationObservation {
  o.edge = {
    via: 'httproute/web',
    url: null,
    target: 'http://127.0.0.1:30080',
    host: null,
    source: 'Gateway termlab-edge/edge has no status.addresses: the edge Service',
    gateway: 'termlab-edge/edge',
    backend: { service: 'web', port: 80 },
    namespace: 'termlab-edge',
  };
  o.evidence.edgeLogs = [
    {
      pod: 'traefik-0',
      uid: 't0',
      lines: ['2026-12-06T19:23:40Z INF Starting provider', ...lines].map(line),
      ended: false,
      error: null,
    },
  ];
  // L232 carries the id it sent (contract C4); the others are found by their id's tail.
  o.evidence.loadLog!.lines = o.evidence.loadLog!.lines.map((l) =>
    l.text.includes('"id":"L232"')
      ? { ...l, text: l.text.replace('"id":"L232"', '"id":"L232","requestId":"r7-L232"') }
      : l,
  );
  return o;
}

describe('verify through the edge', () => {
  const o = throughEdge(fixture(), [
    // 0.7 s after the slice dropped dhchn (53.096): the edge's lag.
    access('2026-12-06T19:23:53.796Z', 'r7-L232', {}),
    // A POST at 53.080: after its TERM (53.067), before the slice dropped it: the kept-alive race.
    access('2026-12-06T19:23:53.080Z', 'r7-L280', { RequestMethod: 'POST' }),
    // No server picked, 503: no endpoint at the edge.
    access('2026-12-06T19:23:55.156Z', 'r7-L333', { DownstreamStatus: 503, ServiceAddr: undefined }),
    // A request that succeeded, 1.2 s after the removal: the edge's lag is measured from it too.
    access('2026-12-06T19:23:54.296Z', 'r7-L999', { DownstreamStatus: 200, OriginStatus: 200 }),
    // Another pod's line (another port) says nothing of dhchn.
    access('2026-12-06T19:23:56.000Z', 'r7-L998', {
      DownstreamStatus: 200,
      OriginStatus: 200,
      ServiceAddr: '127.0.0.1:1',
    }),
  ]);
  const g = gradeVerification(o);

  it("gives each failed request the edge's cause its times show, and leaves the others to verify's own", () => {
    expect(g.verdict).toBe('fail');
    expect(g.edge!.byCause).toEqual({
      'edge-routed-to-removed-endpoint': 1,
      'keepalive-closed-by-app': 1,
      'no-endpoint-at-edge': 1,
    });
    const by = new Map(g.edge!.findings.map((f) => [f.id, f]));
    expect(by.get('L232')!.lagSeconds).toBeCloseTo(0.7, 3);
    expect(by.get('L232')!.pod).toBe('web-74f8f8bbbc-dhchn');
    expect(by.get('L280')!.why).toContain('does not replay');
    expect(g.edge!.undecided).toBe(g.failed - 3);
    expect(
      g.edge!.findings.filter((f) => f.cause === null).every((f) => f.why.includes('the edge logged no request')),
    ).toBe(true);
  });

  it("measures the edge's lag from its last request to the removed pod, failed or not, and advises a sleep from it", () => {
    const lag = g.edge!.lags.find((l) => l.pod === 'web-74f8f8bbbc-dhchn')!;
    expect(lag.lag).toBeCloseTo(1.2, 3);
    // 54.296 − the deletion seen at 53.084 = 1.2 s; + 1 s margin, rounded up: 3 s.
    expect(g.advice[0]).toMatch(/^add `preStop: sleep` of at least 3s — preStop sleep ≥ the edge's lag: 1\.2s/);
    expect(g.reasoning.join('\n')).toContain('up to 1.2s after the EndpointSlice dropped it');
    expect(g.advice.join('\n')).toContain('send `Connection: close` after TERM');
  });

  it("gives a request the edge never had no pod's cause, and one sleep advised, the edge's", () => {
    expect(g.advice.filter((a) => a.includes('preStop: sleep'))).toHaveLength(1);
    const text = terminalSummary(g);
    expect(text).not.toMatch(/^ {2}cause \d/m);
    expect(text).toMatch(/→ not at the edge: the edge logged no request L\d+/);
  });

  it('shows the edge in the terminal summary', () => {
    const text = terminalSummary(g);
    expect(text).toContain('through the edge httproute/web');
    expect(text).toContain('at the edge, edge-routed-to-removed-endpoint');
  });

  it('through --url nothing is decided at the edge, and it says what was not measured', () => {
    const u = fixture();
    u.edge = { ...throughEdge(fixture(), []).edge!, via: null, url: 'http://lb.example' };
    const gu = gradeVerification(u);
    expect(gu.edge!.readable).toBe(false);
    expect(gu.edge!.undecided).toBe(gu.failed);
    expect(gu.reasoning[0]).toContain('was not read (--url)');
    expect(terminalSummary(gu)).toContain('not read: causes from the client side and the pods only');
  });

  it('a file from before the edge grades as before, with no edge', () => {
    const old = gradeVerification(fixture());
    expect(old.edge).toBe(null);
    expect(old.advice[0]).toMatch(/preStop: sleep/);
  });
});

describe('an edge whose lines carry no request id (a load that sent none)', () => {
  it('matches no failure to a line, yet advises a sleep from the lag measured on every line', () => {
    const o = fixture();
    throughEdge(o, [
      access('2026-12-06T19:23:53.796Z', null, {}),
      access('2026-12-06T19:23:54.296Z', null, { DownstreamStatus: 200, OriginStatus: 200 }),
    ]);
    const g = gradeVerification(o);
    expect(g.edge!.undecided).toBe(g.failed);
    expect(g.edge!.findings.every((f) => f.unmeasured[0]?.includes("the edge's line for this request"))).toBe(true);
    // The last line to dhchn, 54.296, − its deletion seen at 53.084: 1.2 s, + 1 s, rounded up: 3 s.
    expect(g.advice[0]).toMatch(/^add `preStop: sleep` of at least 3s — preStop sleep ≥ the edge's lag: 1\.2s/);
    expect(g.reasoning.join('\n')).toContain('carry no request ids');
  });
});

describe("the real node's Traefik, whose load sent no header: the path's id query", () => {
  it('matches each failed request to its edge line by the id the load put in the path', () => {
    const o = throughEdge(fixture(), [
      access('2026-12-06T19:23:53.796Z', null, { RequestPath: '/work?ms=200&id=L232' }),
      access('2026-12-06T19:23:54.296Z', null, { DownstreamStatus: 200, OriginStatus: 200 }),
    ]);
    // The load's own requestId (r7-L232) is not on the line: the path's id is.
    const g = gradeVerification(o);
    const f = g.edge!.findings.find((x) => x.id === 'L232')!;
    expect(f.cause).toBe('edge-routed-to-removed-endpoint');
    expect(f.lagSeconds).toBeCloseTo(0.7, 3);
  });
});
