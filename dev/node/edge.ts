// The node's edge (docs/edge.md): the Gateway API standard-channel CRDs, then manifests/edge/traefik.yaml,
// applied server-side by cluster:up, which waits for Traefik's pod Ready and the Gateway Programmed.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import * as k8s from '@kubernetes/client-node';
import { parseAllDocuments } from 'yaml';
import { REPO } from './layout.ts';
import { StepError, waitUntil } from './steps.ts';
import { GATEWAY_API_VERSION, moduleDir } from './traefik.ts';

export const EDGE_MANIFEST = join(REPO, 'manifests', 'edge', 'traefik.yaml');
export const EDGE_NAMESPACE = 'termlab-edge';
export const EDGE_GATEWAY = 'edge';
export const EDGE_SELECTOR = 'app.kubernetes.io/name=traefik';
/** The Service's NodePort on the node IP: the edge from the host (manifests/edge/traefik.yaml). */
export const EDGE_NODE_PORT = 30080;
const FIELD_MANAGER = 'termlab-node';

/** Every object of a multi-document YAML text, empty documents left out; a parse error names the file. */
export function objectsOf(text: string, file: string): k8s.KubernetesObject[] {
  return parseAllDocuments(text).flatMap((doc) => {
    if (doc.errors.length) throw new StepError(`${file}: ${doc.errors[0]?.message}`);
    const value = doc.toJS() as k8s.KubernetesObject | null;
    return value ? [value] : [];
  });
}

/** The standard-channel CRDs (and their upgrade policy) from the gateway-api module's config/crd/standard. */
export function gatewayApiFiles(version = GATEWAY_API_VERSION): string[] {
  const dir = join(moduleDir('sigs.k8s.io/gateway-api', version), 'config', 'crd', 'standard');
  return readdirSync(dir)
    .filter((f) => f.endsWith('.yaml'))
    .sort()
    .map((f) => join(dir, f));
}

async function apply(client: k8s.KubernetesObjectApi, objects: k8s.KubernetesObject[]): Promise<void> {
  for (const object of objects) {
    // A kind whose CRD was just established may not be in discovery yet: a few tries.
    for (let attempt = 1; ; attempt++) {
      try {
        await client.patch(object, undefined, undefined, FIELD_MANAGER, true, k8s.PatchStrategy.ServerSideApply);
        break;
      } catch (error) {
        if (attempt >= 20)
          throw new StepError(
            `apply ${object.kind} ${object.metadata?.namespace ?? ''}/${object.metadata?.name}: ${(error as Error).message}`,
          );
        await sleep(500);
      }
    }
  }
}

/** Applies objects server-side on the node that kc reaches, in order. */
export async function applyObjects(kc: k8s.KubeConfig, objects: k8s.KubernetesObject[]): Promise<void> {
  await apply(k8s.KubernetesObjectApi.makeApiClient(kc), objects);
}

const condition = (conditions: { type: string; status: string }[] | undefined, type: string) =>
  conditions?.some((c) => c.type === type && c.status === 'True') ?? false;

/** Installs the edge on the node that kc reaches and waits until it routes. */
export async function installEdge(kc: k8s.KubeConfig): Promise<void> {
  const client = k8s.KubernetesObjectApi.makeApiClient(kc);
  const crds = gatewayApiFiles().flatMap((file) => objectsOf(readFileSync(file, 'utf8'), file));
  await apply(client, crds);
  const ext = kc.makeApiClient(k8s.ApiextensionsV1Api);
  await waitUntil(
    'Gateway API CRDs Established',
    async () => {
      for (const crd of crds.filter((o) => o.kind === 'CustomResourceDefinition')) {
        const got = await ext.readCustomResourceDefinition({ name: crd.metadata?.name ?? '' });
        if (!condition(got.status?.conditions, 'Established')) return false;
      }
      return true;
    },
    60_000,
  );
  await apply(client, objectsOf(readFileSync(EDGE_MANIFEST, 'utf8'), EDGE_MANIFEST));
  const core = kc.makeApiClient(k8s.CoreV1Api);
  await waitUntil(
    `Traefik pod Ready (${EDGE_NAMESPACE}, ${EDGE_SELECTOR})`,
    async () => {
      const pods = (await core.listNamespacedPod({ namespace: EDGE_NAMESPACE, labelSelector: EDGE_SELECTOR })).items;
      return pods.some((p) => !p.metadata?.deletionTimestamp && condition(p.status?.conditions, 'Ready'));
    },
    180_000,
  );
  const custom = kc.makeApiClient(k8s.CustomObjectsApi);
  await waitUntil(
    `Gateway ${EDGE_NAMESPACE}/${EDGE_GATEWAY} Programmed`,
    async () => {
      const gw = (await custom.getNamespacedCustomObject({
        group: 'gateway.networking.k8s.io',
        version: 'v1',
        namespace: EDGE_NAMESPACE,
        plural: 'gateways',
        name: EDGE_GATEWAY,
      })) as { status?: { conditions?: { type: string; status: string }[] } };
      return condition(gw.status?.conditions, 'Programmed');
    },
    60_000,
  );
}
