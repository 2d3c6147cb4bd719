// Each failed request's cause at the edge, from hand-made evidence; the expectations are the rules
// (the edge's lag after the EndpointSlice's removal; a 502 with nothing from a pod at or after its TERM,
// or one whose app idles connections out sooner than the edge; a 503 with no server), not the code's output.
import { describe, expect, it } from 'vitest';
import type { EdgeAccess } from '../../harness/edge/access-log.ts';
import {
  attributeAtEdge,
  removedAt,
  type EdgeEvidence,
  type EdgePod,
  type EdgeRequest,
  type SliceChange,
} from '../../harness/edge/attribute.ts';

const pod = (over: Partial<EdgePod> = {}): EdgePod => ({
  name: 'web-a',
  ip: '10.0.0.7',
  deletion: 0,
  term: 0.01,
  exited: null,
  keepAliveTimeoutSeconds: null,
  ...over,
});
const req = (over: Partial<EdgeRequest> = {}): EdgeRequest => ({
  id: 'run-L1',
  method: 'GET',
  due: 1,
  sent: 1,
  ended: 1.01,
  status: 502,
  body: 'Bad Gateway',
  reused: true,
  ...over,
});
const line = (over: Partial<EdgeAccess> = {}): EdgeAccess => ({
  line: 0,
  startMs: 0,
  endMs: 0,
  status: 502,
  originStatus: null,
  method: 'GET',
  path: '/',
  host: null,
  upstream: '10.0.0.7:8080',
  router: 'r',
  retries: 0,
  requestId: 'run-L1',
  pathId: null,
  ...over,
});
// web-a ready from -10 s, not ready at 0.2 s; web-b ready throughout.
const slice: SliceChange[] = [
  { at: -10, ip: '10.0.0.7', gone: false, ready: true },
  { at: -10, ip: '10.0.0.8', gone: false, ready: true },
  { at: 0.2, ip: '10.0.0.7', gone: false, ready: false },
];
const evidence = (at: number, a: Partial<EdgeAccess> = {}, over: Partial<EdgeEvidence> = {}): EdgeEvidence => ({
  access: line(a),
  accessAt: { start: at, end: at + 0.001 },
  accessLogRead: true,
  pods: [pod(), pod({ name: 'web-b', ip: '10.0.0.8', deletion: null, term: null })],
  slice,
  edgeIdleTimeoutSeconds: 90,
  ...over,
});

describe("a failed request's cause at the edge", () => {
  it("sent to a pod 1.7 s after the EndpointSlice dropped it: the edge's lag, 1.7 s, whatever the pod answered", () => {
    const a = attributeAtEdge(req(), evidence(1.9));
    expect(a.cause).toBe('edge-routed-to-removed-endpoint');
    expect(a.pod).toBe('web-a');
    expect(a.lagSeconds).toBeCloseTo(1.7, 6);
    expect(a.why).toContain('1.90s, 1.70s after the EndpointSlice dropped that endpoint (0.20s)');
    const refused = attributeAtEdge(req({ status: 503 }), evidence(1.9, { status: 503, originStatus: 503 }));
    expect(refused.cause).toBe('edge-routed-to-removed-endpoint');
    expect(refused.why).toContain('the pod said 503');
  });

  it('sent at the moment of the removal is not the lag (the same moment on separate clocks)', () => {
    const a = attributeAtEdge(req(), evidence(0.22, {}, { pods: [pod({ term: 5 })] }));
    expect(a.cause).not.toBe('edge-routed-to-removed-endpoint');
  });

  it('a POST given 502 with nothing from a pod still listed, after its TERM: the kept-alive race, not replayed', () => {
    const terming = [pod({ term: 0.1 })];
    const a = attributeAtEdge(req({ method: 'POST' }), evidence(0.15, { method: 'POST' }, { pods: terming }));
    expect(a.cause).toBe('keepalive-closed-by-app');
    expect(a.why).toContain('after its TERM (0.10s)');
    expect(a.why).toContain('does not replay');
    // A GET there is replayed once by Go's transport: it failed on the replay too, and it says so.
    const g = attributeAtEdge(req(), evidence(0.15, {}, { pods: terming }));
    expect(g.cause).toBe('keepalive-closed-by-app');
    expect(g.why).toContain('replays once');
  });

  it('a 502 before any TERM is the kept-alive race only when the app idles connections out sooner than the edge', () => {
    const early = [pod({ term: 5, deletion: 5 })];
    const unknown = attributeAtEdge(req(), evidence(0.1, {}, { pods: early }));
    expect(unknown.cause).toBe(null);
    expect(unknown.unmeasured).toContain("the app's keep-alive timeout");
    const idle = [pod({ term: 5, deletion: 5, keepAliveTimeoutSeconds: 5 })];
    const a = attributeAtEdge(req(), evidence(0.1, {}, { pods: idle }));
    expect(a.cause).toBe('keepalive-closed-by-app');
    expect(a.why).toContain('idle 5s, sooner than the edge');
    const longer = [pod({ term: 5, deletion: 5, keepAliveTimeoutSeconds: 120 })];
    expect(attributeAtEdge(req(), evidence(0.1, {}, { pods: longer })).cause).toBe(null);
  });

  it('a 503 with no server picked: no endpoint at the edge, and whether the slice had any then', () => {
    const a503 = { status: 503, upstream: null };
    const none: SliceChange[] = [...slice, { at: 0.3, ip: '10.0.0.8', gone: true, ready: null }];
    const empty = attributeAtEdge(req({ status: 503 }), evidence(0.5, a503, { slice: none }));
    expect(empty.cause).toBe('no-endpoint-at-edge');
    expect(empty.why).toContain('no ready endpoint');
    const late = attributeAtEdge(req({ status: 503 }), evidence(0.5, a503));
    expect(late.cause).toBe('no-endpoint-at-edge');
    expect(late.why).toContain('listed 1 ready');
  });

  it("a 503 the pod itself answered while still listed is not the edge's: verify's causes apply", () => {
    const a = attributeAtEdge(req({ status: 503 }), evidence(0.1, { status: 503, originStatus: 503 }));
    expect(a.cause).toBe(null);
    expect(a.pod).toBe('web-a');
  });

  it('with no line at the edge, or no edge log at all, it says what could not be measured', () => {
    const missing = attributeAtEdge(req(), evidence(1, {}, { access: null, accessAt: null }));
    expect(missing.cause).toBe(null);
    expect(missing.why).toContain('the edge logged no request run-L1');
    const blind = attributeAtEdge(req(), evidence(1, {}, { accessLogRead: false, access: null, accessAt: null }));
    expect(blind.cause).toBe(null);
    expect(blind.unmeasured[0]).toContain("the edge's access log");
  });

  it('an endpoint gone from the slice (not just not ready) counts as removed, and one never ready is not', () => {
    const gone: SliceChange[] = [
      { at: -1, ip: '10.0.0.7', gone: false, ready: true },
      { at: 0.5, ip: '10.0.0.7', gone: true, ready: null },
    ];
    expect(attributeAtEdge(req(), evidence(1, {}, { slice: gone })).lagSeconds).toBeCloseTo(0.5, 6);
    const never: SliceChange[] = [{ at: 0.5, ip: '10.0.0.7', gone: false, ready: false }];
    expect(attributeAtEdge(req(), evidence(1, {}, { slice: never })).cause).not.toBe('edge-routed-to-removed-endpoint');
  });
});

describe('what the edge cannot tell', () => {
  it("with no request id on any of the edge's lines, no line is taken for this request's", () => {
    const a = attributeAtEdge(req(), evidence(1.9, {}, { idsKept: false }));
    expect(a.cause).toBe(null);
    expect(a.unmeasured[0]).toContain("the edge's line for this request");
  });

  it('a 404 with no router and no server (the Ingress provider drops a Service with no endpoint): no endpoint at the edge', () => {
    const a = attributeAtEdge(req({ status: 404 }), evidence(0.5, { status: 404, upstream: null, router: null }));
    expect(a.cause).toBe('no-endpoint-at-edge');
    expect(a.why).toContain('answered 404');
    // A 404 a router sent on (the app's own answer) is not.
    expect(attributeAtEdge(req({ status: 404 }), evidence(0.1, { status: 404, originStatus: 404 })).cause).toBe(null);
  });
});

describe("Traefik's own 502 in OriginStatus", () => {
  it("a 502 logged as OriginStatus 502 with the body Bad Gateway is the edge's, not the pod's answer", () => {
    const a = attributeAtEdge(
      req({ method: 'POST', body: 'Bad Gateway' }),
      evidence(0.15, { method: 'POST', originStatus: 502 }, { pods: [pod({ term: 0.1 })] }),
    );
    expect(a.cause).toBe('keepalive-closed-by-app');
    const app = attributeAtEdge(
      req({ method: 'POST', body: '{"error":"upstream db"}' }),
      evidence(0.15, { method: 'POST', originStatus: 502 }, { pods: [pod({ term: 0.1 })] }),
    );
    expect(app.cause).toBe(null);
    expect(app.why).toContain('the pod said 502');
  });

  it('sent as the slice dropped the pod (within the same moment) is said so, not "before"', () => {
    const a = attributeAtEdge(req({ status: 503 }), evidence(0.22, { status: 503, originStatus: 503 }));
    expect(a.why).toContain('as the EndpointSlice dropped it (0.20s, the same moment)');
  });
});

describe("the endpoint's removal", () => {
  it('is the drop it never came back from: a readiness blip before it is not its removal (the node at load, 00:53)', () => {
    const blip: SliceChange[] = [
      { at: -10, ip: '10.0.0.7', gone: false, ready: true },
      { at: -1.4, ip: '10.0.0.7', gone: false, ready: false },
      { at: -0.4, ip: '10.0.0.7', gone: false, ready: true },
      { at: 3.8, ip: '10.0.0.7', gone: false, ready: false },
      { at: 4.5, ip: '10.0.0.7', gone: true, ready: null },
    ];
    expect(removedAt(blip, '10.0.0.7')).toBe(3.8);
    // Sent between the blip and the removal: no lag.
    expect(
      attributeAtEdge(req({ status: 503 }), evidence(2, { status: 503, originStatus: 503 }, { slice: blip })).cause,
    ).toBe(null);
  });
});
