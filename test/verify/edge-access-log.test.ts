// Traefik's JSON access log as the traefik container writes it: access lines among its general log
// lines (text at INFO), unknown fields, and a broken line that claims to be an access line.
import { describe, expect, it } from 'vitest';
import { byRequestId, parseAccessLine, parseAccessLog, wallMsOf } from '../../harness/edge/access-log.ts';

const access = (over: Record<string, unknown> = {}) =>
  JSON.stringify({
    ClientAddr: '10.244.0.9:41234',
    DownstreamContentSize: 11,
    DownstreamStatus: 502,
    Duration: 1_500_000,
    OriginStatus: 0,
    RequestHost: 'web.example',
    RequestMethod: 'POST',
    RequestPath: '/work',
    RetryAttempts: 0,
    RouterName: 'httproute-default-web-gw-termlab-edge-edge-ep-web-0-1c0cf925ddb0d4fe8b55@kubernetesgateway',
    ServiceAddr: '10.244.0.7:8080',
    ServiceURL: 'http://10.244.0.7:8080',
    StartUTC: '2026-12-07T00:10:01.123456789Z',
    entryPointName: 'web',
    level: 'info',
    msg: '',
    'request_X-Termlab-Request': 'run1-L42',
    time: '2026-12-07T00:10:01Z',
    ...over,
  });

describe("the edge's access log", () => {
  it('reads an access line: its start to the microsecond, its end from Duration (ns), its upstream and request id', () => {
    const e = parseAccessLine(access(), 3);
    expect(e).toEqual({
      line: 3,
      startMs: Date.parse('2026-12-07T00:10:01.123Z') + 0.456789,
      endMs: Date.parse('2026-12-07T00:10:01.123Z') + 0.456789 + 1.5,
      status: 502,
      originStatus: null,
      method: 'POST',
      path: '/work',
      host: 'web.example',
      upstream: '10.244.0.7:8080',
      router: expect.stringContaining('httproute-default-web'),
      retries: 0,
      requestId: 'run1-L42',
      pathId: null,
    });
  });

  it("skips Traefik's general lines, text or JSON, and keeps unknown fields out of the way", () => {
    const log = parseAccessLog([
      '2026-12-07T00:10:00Z INF Starting provider *gateway.Provider',
      '{"level":"info","msg":"Configuration loaded from flags.","time":"2026-12-07T00:10:00Z"}',
      'not json {',
      access({ SomethingNew: { nested: true } }),
      { text: access({ 'request_X-Termlab-Request': 'run1-L43', OriginStatus: 200, DownstreamStatus: 200 }) },
    ]);
    expect(log.skipped).toBe(3);
    expect(log.malformed).toEqual([]);
    expect(log.entries.map((e) => [e.line, e.requestId, e.originStatus])).toEqual([
      [3, 'run1-L42', null],
      [4, 'run1-L43', 200],
    ]);
  });

  it('names the field of a line that claims to be an access line but is broken', () => {
    const log = parseAccessLog(['x', access({ Duration: 'slow' }), access({ StartUTC: 'yesterday' })]);
    expect(log.entries).toEqual([]);
    expect(log.malformed).toHaveLength(2);
    expect(log.malformed[0]!.line).toBe(1);
    expect(log.malformed[0]!.problem).toMatch(/^access-log line 2: .*Duration/);
    expect(log.malformed[1]!.problem).toMatch(/StartUTC.*RFC 3339/);
  });

  it('takes the upstream from ServiceURL when ServiceAddr is absent, and none when the edge picked no server', () => {
    const fromUrl = parseAccessLine(access({ ServiceAddr: undefined }));
    expect(fromUrl && 'upstream' in fromUrl && fromUrl.upstream).toBe('10.244.0.7:8080');
    const none = parseAccessLine(access({ ServiceAddr: undefined, ServiceURL: undefined, DownstreamStatus: 503 }));
    expect(none && 'upstream' in none && none.upstream).toBe(null);
  });

  it('finds a request id whatever the case of the header field, and the first line of an id', () => {
    const log = parseAccessLog([
      access({ 'request_X-Termlab-Request': undefined, 'request_x-termlab-request': 'a' }),
      access({ 'request_X-Termlab-Request': 'a', DownstreamStatus: 200 }),
    ]);
    expect(byRequestId(log).get('a')!.line).toBe(0);
  });

  it("reads the load's `id` query from the path, as the real node's Traefik logged it", () => {
    const e = parseAccessLine(
      access({ RequestPath: '/work?ms=200\u0026id=L374', 'request_X-Termlab-Request': undefined }),
    );
    expect(e && 'pathId' in e && [e.pathId, e.requestId]).toEqual(['L374', null]);
  });

  it("reads a line the real node's Traefik v3.7.13 wrote (a 502 its own, logged as OriginStatus 502 too)", () => {
    const real =
      '{"ClientAddr":"10.244.0.172:54026","ClientHost":"10.244.0.172","ClientPort":"54026","ClientUsername":"-","DownstreamContentSize":11,"DownstreamStatus":502,"Duration":18694373,"OriginContentSize":11,"OriginDuration":18588602,"OriginStatus":502,"Overhead":105771,"RequestAddr":"10.96.123.221","RequestContentSize":0,"RequestCount":40982,"RequestHost":"10.96.123.221","RequestMethod":"GET","RequestPath":"/work?ms=200\\u0026id=L374","RequestPort":"-","RequestProtocol":"HTTP/1.1","RequestScheme":"http","RetryAttempts":0,"RouterName":"httproute-verify-edge-web-gw-termlab-edge-edge-ep-web-0-1a3a854e4bd9a7f7f542@kubernetesgateway","ServiceAddr":"10.244.0.170:8080","ServiceName":"httproute-verify-edge-web-gw-termlab-edge-edge-ep-web-0-1a3a854e4bd9a7f7f542-svc-verify-edge-web-0@kubernetesgateway","ServiceURL":"http://10.244.0.170:8080","StartLocal":"2026-12-07T00:46:16.536788001Z","StartUTC":"2026-12-07T00:46:16.536788001Z","entryPointName":"web","level":"info","msg":"","time":"2026-12-07T00:46:16Z"}';
    const e = parseAccessLine(real);
    expect(e).toMatchObject({
      status: 502,
      originStatus: 502,
      method: 'GET',
      upstream: '10.244.0.170:8080',
      pathId: 'L374',
      requestId: null,
    });
  });

  it('reads offsets other than Z, and refuses a time without a zone', () => {
    expect(wallMsOf('2026-12-07T01:10:01.5+01:00')).toBe(Date.parse('2026-12-07T00:10:01.500Z'));
    expect(wallMsOf('2026-12-07T00:10:01')).toBeNaN();
  });
});
