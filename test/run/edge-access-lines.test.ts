// What an edge run keeps of the edge pods' logs: this route's access-log lines only, with the fields the grade
// reads (contract C2); Traefik's text log and other routes' lines are left out. The line below is a real one
// from the node (Traefik v3.7.13, node-edge's note in /work/notes/edge-findings.md).
import { describe, expect, it } from 'vitest';
import { parseAccessLine } from '../../harness/edge/access-log.ts';
import { routeAccessLine } from '../../harness/run/edge.ts';

const REAL = JSON.stringify({
  ClientAddr: '10.244.0.1:21447',
  ClientHost: '10.244.0.1',
  ClientPort: '21447',
  ClientUsername: '-',
  DownstreamContentSize: 15,
  DownstreamStatus: 200,
  Duration: 8733892,
  OriginContentSize: 15,
  OriginDuration: 8432649,
  OriginStatus: 200,
  Overhead: 301243,
  RequestAddr: 'web.demo.test',
  RequestContentSize: 0,
  RequestCount: 1,
  RequestHost: 'web.demo.test',
  RequestMethod: 'GET',
  RequestPath: '/healthz',
  RequestPort: '-',
  RequestProtocol: 'HTTP/1.1',
  RequestScheme: 'http',
  RetryAttempts: 0,
  RouterName: 'httproute-edge-demo-web-gw-termlab-edge-edge-ep-web-0-4c092adbc7af651a3fe5@kubernetesgateway',
  ServiceAddr: '10.244.0.146:8080',
  ServiceName:
    'httproute-edge-demo-web-gw-termlab-edge-edge-ep-web-0-4c092adbc7af651a3fe5-svc-edge-demo-web-0@kubernetesgateway',
  ServiceURL: 'http://10.244.0.146:8080',
  StartLocal: '2026-12-07T00:36:45.588913591Z',
  StartUTC: '2026-12-07T00:36:45.588913591Z',
  entryPointName: 'web',
  level: 'info',
  msg: '',
  'request_X-Termlab-Request': 'demo-web.demo.test',
  time: '2026-12-07T00:36:45Z',
});

describe("an edge run's access-log lines", () => {
  it('keeps C2 fields of its own route, and the grade reads the kept line as it reads the whole one', () => {
    const kept = routeAccessLine(REAL, 'web.demo.test')!;
    expect(Object.keys(JSON.parse(kept))).toEqual([
      'DownstreamStatus',
      'Duration',
      'OriginStatus',
      'RequestHost',
      'RequestMethod',
      'RequestPath',
      'RetryAttempts',
      'RouterName',
      'ServiceAddr',
      'ServiceURL',
      'StartUTC',
      'request_X-Termlab-Request',
    ]);
    expect(kept.length).toBeLessThan(REAL.length / 2);
    expect(parseAccessLine(kept)).toEqual(parseAccessLine(REAL));
  });

  it("leaves out another route's line, a host that only contains this one, and Traefik's text log", () => {
    expect(routeAccessLine(REAL, 'other.demo.test')).toBeNull();
    expect(routeAccessLine(REAL.replaceAll('web.demo.test', 'xweb.demo.test'), 'web.demo.test')).toBeNull();
    expect(
      routeAccessLine(
        '\u001b[90m2026-12-07T00:36:45Z\u001b[0m \u001b[32mINF\u001b[0m web.demo.test Configuration loaded',
        'web.demo.test',
      ),
    ).toBeNull();
  });
});
