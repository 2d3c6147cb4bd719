// The least rights of manifests/rbac.yaml plus manifests/rbac-edge.yaml cover every call an edge scenario makes
// (harness/run/edge.ts through harness/kube/edge-routes.ts, then its rollout), and give nothing in the edge's
// namespace but reading. Checked by hand on the node too: `kubectl auth can-i --as=system:serviceaccount:termlab:
// termlab-student` said yes to each call below and no to deleting an edge pod or creating a route there.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';

interface Rule {
  apiGroups: string[];
  resources: string[];
  verbs: string[];
}
const roles = ['manifests/rbac.yaml', 'manifests/rbac-edge.yaml'].flatMap((f) =>
  parseAllDocuments(readFileSync(f, 'utf8'))
    .map((d) => d.toJS() as { kind: string; metadata: { namespace: string }; rules?: Rule[] })
    .filter((d) => d.kind === 'Role'),
);
const allowed = (namespace: string, group: string, resource: string, verb: string) =>
  roles.some(
    (r) =>
      r.metadata.namespace === namespace &&
      r.rules!.some((x) => x.apiGroups.includes(group) && x.resources.includes(resource) && x.verbs.includes(verb)),
  );

/** [namespace, API group, resource, verb]: what an edge scenario asks of the API beyond a rollout. */
const EDGE_CALLS: [string, string, string, string][] = [
  ['termlab', 'gateway.networking.k8s.io', 'httproutes', 'create'],
  ['termlab', 'gateway.networking.k8s.io', 'httproutes', 'delete'],
  // termlab reap: a killed run's routes (harness/safety/reap-workloads.ts).
  ['termlab', 'gateway.networking.k8s.io', 'httproutes', 'list'],
  ['termlab', 'networking.k8s.io', 'ingresses', 'create'],
  ['termlab', 'networking.k8s.io', 'ingresses', 'delete'],
  ['termlab', 'networking.k8s.io', 'ingresses', 'list'],
  ['termlab-edge', 'gateway.networking.k8s.io', 'gateways', 'get'],
  ['termlab-edge', '', 'services', 'get'],
  ['termlab-edge', '', 'pods', 'list'],
  ['termlab-edge', '', 'pods/log', 'get'],
  // Its rollout's own, from rbac.yaml.
  ['termlab', 'apps', 'deployments', 'create'],
  ['termlab', 'discovery.k8s.io', 'endpointslices', 'watch'],
];

describe("the edge lab's rights", () => {
  it.each(EDGE_CALLS)('%s: %s %s %s is granted', (ns, group, resource, verb) => {
    expect(allowed(ns, group, resource, verb)).toBe(true);
  });

  it("grants nothing but reading in the edge's namespace", () => {
    const edgeVerbs = roles
      .filter((r) => r.metadata.namespace === 'termlab-edge')
      .flatMap((r) => r.rules!.flatMap((x) => x.verbs));
    expect(new Set(edgeVerbs)).toEqual(new Set(['get', 'list']));
  });
});
