// Finding the edge for --via (contract C5) from route, Gateway and Service objects as the API holds
// them, and --via/--url refused with the field named; the route's errors carry EDGE_NOT_FOUND (exit 6).
import { describe, expect, it } from 'vitest';
import { EXIT, exitCodeFor, type TermlabError } from '../../lib/errors.ts';
import { edgeAddress, parseEdgeUrl, parseVia, routeFacts } from '../../harness/edge/find.ts';

const route = {
  spec: {
    parentRefs: [{ name: 'edge', namespace: 'termlab-edge' }],
    hostnames: ['web.example'],
    rules: [{ backendRefs: [{ name: 'web', port: 80 }] }],
  },
};
const gateway = (addresses: { value: string }[] = []) => ({
  spec: { listeners: [{ name: 'web', protocol: 'HTTP', port: 8000 }] },
  status: { addresses },
});
const service = {
  metadata: { name: 'traefik', namespace: 'termlab-edge' },
  spec: { clusterIP: '10.96.0.20', ports: [{ port: 80, nodePort: 30080 }] },
};
const thrown = (f: () => unknown) => {
  try {
    f();
  } catch (e) {
    return e as TermlabError;
  }
  throw new Error('did not throw');
};

describe('the edge for --via', () => {
  it("an HTTPRoute: its Gateway's address and listener port, Host from its first hostname, the backend Service", () => {
    const via = parseVia('httproute/web');
    const facts = routeFacts(via, route, 'default');
    expect(facts).toEqual({
      via: 'httproute/web',
      gateway: { namespace: 'termlab-edge', name: 'edge', sectionName: null },
      host: 'web.example',
      backend: { service: 'web', port: 80 },
    });
    const a = edgeAddress(via, facts, { route, gateway: gateway([{ value: '192.0.2.5' }]), service }, null);
    expect(a).toMatchObject({ target: 'http://192.0.2.5:8000', namespace: 'termlab-edge' });
  });

  it("a Gateway with no address (Traefik's NodePort Service): the edge's Service, ClusterIP on a cluster, NodePort on the simulated one", () => {
    const via = parseVia('httproute/web');
    const facts = routeFacts(via, route, 'default');
    const real = edgeAddress(via, facts, { route, gateway: gateway(), service }, null);
    expect(real.target).toBe('http://10.96.0.20:80');
    expect(real.source).toContain('has no status.addresses');
    const sim = edgeAddress(via, facts, { route, gateway: gateway(), service }, { hostIP: '127.0.0.1' });
    expect(sim.target).toBe('http://127.0.0.1:30080');
    const none = thrown(() => edgeAddress(via, facts, { route, gateway: gateway(), service: null }, null));
    expect(none.code).toBe('EDGE_NOT_FOUND');
    expect(none.message).toContain('Gateway termlab-edge/edge has no address');
    expect(exitCodeFor(none.code)).toBe(EXIT.edgeNotFound);
  });

  it('a route with no parentRef, or a Gateway that is not there, is named', () => {
    const via = parseVia('httproute/web');
    const orphan = thrown(() => routeFacts(via, { spec: { rules: route.spec.rules } }, 'shop'));
    expect(orphan.code).toBe('EDGE_NOT_FOUND');
    expect(orphan.message).toContain('httproute/web in namespace shop has no spec.parentRefs');
    const facts = routeFacts(via, route, 'default');
    const gone = thrown(() => edgeAddress(via, facts, { route, gateway: null, service }, null));
    expect(gone.message).toContain('its parentRef Gateway termlab-edge/edge was not found');
  });

  it("an Ingress: its status's address, port 80, Host from its first rule; without status, the edge's Service or an error", () => {
    const via = parseVia('ingress/web');
    const ing = {
      spec: {
        rules: [
          { host: 'web.example', http: { paths: [{ backend: { service: { name: 'web', port: { number: 80 } } } }] } },
        ],
      },
      status: { loadBalancer: { ingress: [{ ip: '192.0.2.9' }] } },
    };
    const facts = routeFacts(via, ing, 'default');
    expect(facts.host).toBe('web.example');
    expect(facts.backend).toEqual({ service: 'web', port: 80 });
    expect(edgeAddress(via, facts, { route: ing, gateway: null, service }, null).target).toBe('http://192.0.2.9:80');
    const bare = { ...ing, status: {} };
    expect(edgeAddress(via, facts, { route: bare, gateway: null, service }, null).source).toContain(
      'ingress/web has no status.loadBalancer.ingress',
    );
    const lost = thrown(() => edgeAddress(via, facts, { route: bare, gateway: null, service: null }, null));
    expect(lost.message).toContain('ingress/web has no status.loadBalancer.ingress');
    expect(lost.code).toBe('EDGE_NOT_FOUND');
  });

  it('--via and --url refuse what they cannot use, naming the flag', () => {
    expect(thrown(() => parseVia('service/web')).message).toContain('--via: expected httproute/NAME or ingress/NAME');
    expect(thrown(() => parseVia('httproute/Web_1')).message).toContain('not a valid httproute name');
    expect(parseVia('ing/web')).toEqual({ kind: 'ingress', name: 'web' });
    expect(thrown(() => parseEdgeUrl('lb.example')).message).toContain('--url: "lb.example" is not a URL');
    expect(thrown(() => parseEdgeUrl('https://lb.example')).message).toContain('only http://');
    expect(thrown(() => parseEdgeUrl('http://lb.example/work')).message).toContain('the path goes in --path');
    expect(parseEdgeUrl('http://lb.example:8080').origin).toBe('http://lb.example:8080');
  });
});
