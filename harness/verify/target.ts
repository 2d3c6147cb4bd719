// Reading what is to be verified, before anything changes: the Deployment (strategy, template
// lifecycle, grace, probes), every current pod (UID, live lifecycle) and the Service in front of
// them; and the plan printed before acting.
import type * as k8s from '@kubernetes/client-node';
import { TermlabError } from '../../lib/errors.ts';
import { listPods } from '../kube/index.ts';
import { apiTimeString } from '../run/clock.ts';
import { liveContainers } from '../run/rollout-watch.ts';
import { listServices, needing, readDeployment, selectorString, selects } from './kube.ts';
import type { EdgePlan, Target, VerifyRequest } from '../observation/verification.ts';
import type { Cluster } from '../kube/index.ts';

type Raw = Record<string, any>;

/** How the load reaches the pods: an existing Service, or one termlab makes for the run. */
export interface ServicePlan {
  existing: k8s.V1Service | null;
  /** Set when termlab makes a Service: why, and its port and targetPort. */
  temporary: {
    why: string;
    type: 'ClusterIP' | 'NodePort';
    port: number;
    targetPort: number | string;
    selector: Record<string, string>;
  } | null;
  port: number;
}

export interface ReadTarget {
  deployment: k8s.V1Deployment;
  target: Omit<Target, 'service'>;
  podSelector: string;
  service: ServicePlan;
}

const plain = (value: unknown) => (value === undefined || value === null ? null : JSON.parse(JSON.stringify(value)));

export async function readTarget(
  cluster: Cluster,
  request: VerifyRequest,
  simulated: boolean,
  viaEdge = false,
): Promise<ReadTarget> {
  const ns = request.namespace;
  const deployment = await readDeployment(cluster, ns, request.deployment);
  if (!deployment)
    throw new TermlabError('USAGE', `deployment/${request.deployment}: not found in namespace ${ns}`, {
      deployment: request.deployment,
      namespace: ns,
    });
  const spec = deployment.spec!;
  const podSelector = selectorString(spec.selector);
  if (!podSelector) throw new TermlabError('USAGE', `deployment/${request.deployment}: its selector is empty`);
  const pods = (await needing('list', 'pods', ns, () => listPods(cluster, ns, { labelSelector: podSelector }))).items;
  const templateSpec = spec.template.spec as Raw;
  const target: ReadTarget['target'] = {
    deployment: {
      name: deployment.metadata!.name!,
      uid: deployment.metadata!.uid!,
      generation: deployment.metadata?.generation ?? null,
      replicas: spec.replicas ?? 1,
      selector: spec.selector.matchLabels ?? {},
      strategy: plain(spec.strategy),
      progressDeadlineSeconds: spec.progressDeadlineSeconds ?? null,
      terminationGracePeriodSeconds: templateSpec.terminationGracePeriodSeconds ?? null,
      containers: liveContainers(plain(templateSpec)),
      probes: (templateSpec.containers ?? []).map((c: Raw) => ({
        container: String(c.name),
        readiness: plain(c.readinessProbe),
        liveness: plain(c.livenessProbe),
        startup: plain(c.startupProbe),
      })),
    },
    pods: pods.map((p) => ({
      name: p.metadata!.name!,
      uid: p.metadata!.uid!,
      phase: p.status?.phase ?? null,
      ready: (p.status?.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True'),
      templateHash: p.metadata?.labels?.['pod-template-hash'] ?? null,
      deletionTimestamp: apiTimeString(p.metadata?.deletionTimestamp),
      terminationGracePeriodSeconds: p.spec?.terminationGracePeriodSeconds ?? null,
      containers: liveContainers(plain(p.spec)),
    })),
  };
  if (target.deployment.replicas < 1)
    throw new TermlabError('USAGE', `deployment/${request.deployment}: it has 0 replicas; there is nothing to verify`);
  return {
    deployment,
    target,
    podSelector,
    service: await planService(cluster, request, deployment, simulated && !viaEdge),
  };
}

function containerPort(deployment: k8s.V1Deployment): number | string | null {
  const port = deployment.spec?.template.spec?.containers?.[0]?.ports?.[0];
  return port ? (port.name ?? port.containerPort) : null;
}

async function planService(
  cluster: Cluster,
  request: VerifyRequest,
  deployment: k8s.V1Deployment,
  simulated: boolean,
): Promise<ServicePlan> {
  const ns = request.namespace;
  const labels = deployment.spec?.template.metadata?.labels ?? {};
  const services = await listServices(cluster, ns);
  let existing: k8s.V1Service | null = null;
  if (request.service) {
    existing = services.find((s) => s.metadata?.name === request.service) ?? null;
    if (!existing)
      throw new TermlabError(
        'USAGE',
        `--service: no Service ${request.service} in namespace ${ns} (it has ${services.map((s) => s.metadata?.name).join(', ') || 'none'})`,
      );
    if (!selects(existing, labels))
      throw new TermlabError(
        'USAGE',
        `--service ${request.service}: its selector does not pick the pods of deployment/${request.deployment}`,
      );
  } else {
    const picking = services.filter((s) => selects(s, labels));
    if (picking.length > 1)
      throw new TermlabError(
        'USAGE',
        `more than one Service selects the pods of deployment/${request.deployment} (${picking.map((s) => s.metadata?.name).join(', ')}): name one with --service`,
      );
    existing = picking[0] ?? null;
  }
  const selector = existing?.spec?.selector ?? deployment.spec?.selector.matchLabels ?? {};
  if (existing) {
    const ports = existing.spec?.ports ?? [];
    const port =
      request.port !== null ? ports.find((p) => p.port === request.port) : ports.length === 1 ? ports[0] : null;
    if (!port)
      throw new TermlabError(
        'USAGE',
        request.port !== null
          ? `--port ${request.port}: Service ${existing.metadata?.name} has no such port (it has ${ports.map((p) => p.port).join(', ')})`
          : `Service ${existing.metadata?.name} has ${ports.length} ports: name one with --port`,
      );
    // The simulated cluster routes NodePorts only (its proxy listens on the host): a twin Service (not
    // through an edge, which reaches the Service's endpoints itself).
    if (simulated && !port.nodePort)
      return {
        existing,
        port: port.port,
        temporary: {
          why: `the simulated cluster routes only NodePorts and Service ${existing.metadata?.name} is ${existing.spec?.type ?? 'ClusterIP'}`,
          type: 'NodePort',
          port: port.port,
          targetPort: port.targetPort ?? port.port,
          selector,
        },
      };
    return { existing, port: port.port, temporary: null };
  }
  const targetPort = request.port ?? containerPort(deployment);
  if (targetPort === null)
    throw new TermlabError(
      'USAGE',
      `no Service selects the pods of deployment/${request.deployment} and its container names no port: give --port`,
    );
  return {
    existing: null,
    port: 80,
    temporary: {
      why: `no Service selects the pods of deployment/${request.deployment}`,
      type: simulated ? 'NodePort' : 'ClusterIP',
      port: 80,
      targetPort,
      selector,
    },
  };
}

/** The plan, as printed before acting: what is read, what is made, the one change. */
export function planText(
  request: VerifyRequest,
  read: ReadTarget,
  victim: string | null,
  edge: EdgePlan | null = null,
): string {
  const ns = request.namespace;
  const svc = read.service;
  const through = edge
    ? `the edge ${edge.via ?? edge.url} at ${edge.target}${edge.host ? ` (Host: ${edge.host})` : ''}, kept-alive connections (${edge.source}), to`
    : 'through';
  const lines = [
    `termlab verify deployment/${request.deployment} in namespace ${ns}:`,
    `  read:   deployment/${request.deployment} (${read.target.deployment.replicas} replicas), its ${read.target.pods.length} pod(s), ReplicaSets, EndpointSlices and pod Events (watched from now)`,
    `  create: a load pod (${request.loadImage}, ${request.rate} requests/s, ${request.method ?? 'GET'} ${request.path}) ${through} ${svc.temporary ? `a temporary ${svc.temporary.type} Service (${svc.temporary.why})` : `Service ${svc.existing!.metadata!.name} port ${svc.port}`}; both removed at the end`,
    request.action === 'rollout-restart'
      ? `  change: the pod template's kubectl.kubernetes.io/restartedAt annotation (what \`kubectl rollout restart\` patches): every pod is replaced`
      : `  change: delete one pod${victim ? ` (${victim})` : ''} with a UID precondition: the Deployment replaces it`,
    ...(edge?.namespace
      ? [
          `  read:   the edge's pods' logs in namespace ${edge.namespace} (label app.kubernetes.io/name=traefik: its access log)`,
        ]
      : []),
    '  nothing else is changed or restored',
  ];
  return lines.join('\n') + '\n';
}
