// One pod from the template and one scenario. Only the fields the scenario is about change.
import type { V1Pod } from '@kubernetes/client-node';
import { podDeadlineSeconds } from '../safety/deadline.ts';
import { IDENTITY_ANNOTATION } from '../safety/identity.ts';
import { ENV_LABEL, HOLD_FINALIZER, ownershipLabels } from '../safety/labels.ts';
import { configureLabContainer, renderPreStop } from '../../server/contract-schemas.ts';
import {
  LAB_MODE_ENV,
  LAB_PROXY_MODE,
  PROXY_CONTAINER,
  PROXY_ON_TERM_ENV,
  PROXY_OWN_PATHS,
  PROXY_UPSTREAM_PORT_ENV,
} from '../../server/contract.ts';
import type { FileScenario, Scenario, Sidecar } from './schema.ts';

export interface RenderOptions {
  podName: string;
  owner: string;
  /** The caller's full name as the cluster reported it (a label value holds only 63 characters). */
  identity?: string;
  runId: string;
  image?: string;
  /** The termlab.io/env label (`--env` or the lab file): the class-wide reaper's scope. */
  env?: string;
  /** A retry scenario's pods: the ledger's address their work calls at the scenario's effect point. */
  ledgerUrl?: string;
}

export function renderPod(
  template: Record<string, any>,
  scenario: Scenario | FileScenario,
  options: RenderOptions,
): V1Pod {
  const pod = structuredClone(template) as any;
  pod.metadata = {
    ...pod.metadata,
    name: options.podName,
    labels: {
      ...pod.metadata?.labels,
      ...ownershipLabels(options.owner, options.runId, scenario.name),
      ...(options.env ? { [ENV_LABEL]: options.env } : {}),
    },
    ...(options.identity
      ? { annotations: { ...pod.metadata?.annotations, [IDENTITY_ANNOTATION]: options.identity } }
      : {}),
    // Keeps the object, with its final container state, until termlab has read it.
    finalizers: [...(pod.metadata?.finalizers ?? []), HOLD_FINALIZER],
  };
  delete pod.metadata.generateName;
  pod.spec.terminationGracePeriodSeconds = scenario.terminationGracePeriodSeconds;
  pod.spec.activeDeadlineSeconds = Math.min(podDeadlineSeconds(scenario), scenario.activeDeadlineSeconds ?? Infinity);
  const container = pod.spec.containers[0];
  const effect =
    scenario.effect && scenario.effect !== 'none' && options.ledgerUrl
      ? { point: scenario.effect, ledgerUrl: options.ledgerUrl }
      : undefined;
  configureLabContainer(container, {
    image: options.image,
    mode: scenario.mode,
    preStop: scenario.preStop,
    termAllocateMiB: scenario.termAllocateMiB,
    effect,
    drainSignal: scenario.drainSignal,
    stopSignal: scenario.stopSignal,
  });
  // validation.go validateStopSignal: a stopSignal is refused on a pod that names no OS.
  if (scenario.stopSignal) pod.spec.os = { ...pod.spec.os, name: 'linux' };
  if (scenario.memoryLimitMiB) {
    const limit = `${scenario.memoryLimitMiB}Mi`;
    container.resources = {
      ...container.resources,
      limits: { ...container.resources?.limits, memory: limit },
      requests: { ...container.resources?.requests, memory: limit },
    };
  }
  if ('sidecar' in scenario && scenario.sidecar) addSidecar(pod.spec, container, scenario.sidecar);
  return pod as V1Pod;
}

/**
 * The proxy container: the lab's image in proxy mode on its own port, forwarding to the lab container's
 * port on localhost, with the lab container's pod identity, resources and security context. A native one
 * goes last in initContainers with restartPolicy: Always; a regular one after the lab container.
 */
function addSidecar(spec: Record<string, any>, lab: Record<string, any>, sidecar: Sidecar): void {
  const identity = (lab.env ?? []).filter((e: { valueFrom?: unknown }) => e.valueFrom);
  const hook = renderPreStop(sidecar.preStop, PROXY_CONTAINER.portName);
  const proxy: Record<string, unknown> = {
    name: PROXY_CONTAINER.name,
    image: lab.image,
    ...(lab.imagePullPolicy ? { imagePullPolicy: lab.imagePullPolicy } : {}),
    ...(sidecar.native ? { restartPolicy: 'Always' } : {}),
    ports: [{ name: PROXY_CONTAINER.portName, containerPort: PROXY_CONTAINER.port }],
    env: [
      { name: LAB_MODE_ENV, value: LAB_PROXY_MODE },
      { name: 'PORT', value: String(PROXY_CONTAINER.port) },
      { name: PROXY_UPSTREAM_PORT_ENV, value: String(lab.ports[0].containerPort) },
      { name: PROXY_ON_TERM_ENV, value: sidecar.onTerm },
      ...identity,
    ],
    readinessProbe: {
      httpGet: { path: PROXY_OWN_PATHS.readyz, port: PROXY_CONTAINER.portName },
      periodSeconds: 1,
      failureThreshold: 1,
    },
    ...(lab.resources ? { resources: structuredClone(lab.resources) } : {}),
    ...(lab.securityContext ? { securityContext: structuredClone(lab.securityContext) } : {}),
    ...(hook ? { lifecycle: { preStop: hook } } : {}),
  };
  if (sidecar.native) spec.initContainers = [...(spec.initContainers ?? []), proxy];
  else spec.containers.push(proxy);
}

export function labPort(template: Record<string, any>): number {
  return template.spec.containers[0].ports[0].containerPort as number;
}

/** Where the scenario's request goes: the proxy's port when it has a sidecar, else the lab server's. */
export function requestPort(template: Record<string, any>, scenario: Scenario | FileScenario): number {
  return 'sidecar' in scenario && scenario.sidecar ? PROXY_CONTAINER.port : labPort(template);
}
