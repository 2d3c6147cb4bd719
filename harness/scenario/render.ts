// One pod from the template and one scenario. Only the fields the scenario is about change.
import type { V1Pod } from '@kubernetes/client-node';
import { podDeadlineSeconds } from '../safety/deadline.ts';
import { ENV_LABEL, HOLD_FINALIZER, ownershipLabels } from '../safety/labels.ts';
import type { PreStop, Scenario } from './schema.ts';

/** The exec hook program's path inside the lab-server image (server/Dockerfile). */
export const HOOK_PROGRAM = '/usr/local/bin/lab-hook';

export function preStopHandler(preStop: PreStop, port: number | string): Record<string, unknown> | null {
  switch (preStop.kind) {
    case 'none': return null;
    case 'exec-sleep': return { exec: { command: [HOOK_PROGRAM, 'sleep', String(Math.round(preStop.seconds * 1000))] } };
    case 'exec-fail': return { exec: { command: [HOOK_PROGRAM, 'fail'] } };
    case 'sleep-action': return { sleep: { seconds: preStop.seconds } };
    case 'httpGet': return { httpGet: { path: `/hook/prestop?ms=${preStop.ms}`, port: preStop.port ?? port } };
  }
}

export interface RenderOptions {
  podName: string;
  owner: string;
  runId: string;
  image?: string;
  /** The termlab.io/env label (`--env` or the lab file): the class-wide reaper's scope. */
  env?: string;
}

export function renderPod(template: Record<string, any>, scenario: Scenario, options: RenderOptions): V1Pod {
  const pod = structuredClone(template) as any;
  pod.metadata = {
    ...pod.metadata,
    name: options.podName,
    labels: { ...pod.metadata?.labels, ...ownershipLabels(options.owner, options.runId, scenario.name), ...(options.env ? { [ENV_LABEL]: options.env } : {}) },
    // Keeps the object, with its final container state, until termlab has read it.
    finalizers: [...(pod.metadata?.finalizers ?? []), HOLD_FINALIZER],
  };
  delete pod.metadata.generateName;
  pod.spec.terminationGracePeriodSeconds = scenario.terminationGracePeriodSeconds;
  pod.spec.activeDeadlineSeconds = Math.min(podDeadlineSeconds(scenario), scenario.activeDeadlineSeconds ?? Infinity);
  const container = pod.spec.containers[0];
  if (options.image) container.image = options.image;
  container.env = [...(container.env ?? []).filter((e: any) => e.name !== 'LAB_MODE'), { name: 'LAB_MODE', value: scenario.mode }];
  if (scenario.termAllocateMiB) container.env.push({ name: 'LAB_TERM_ALLOCATE_MIB', value: String(scenario.termAllocateMiB) });
  if (scenario.memoryLimitMiB) {
    const limit = `${scenario.memoryLimitMiB}Mi`;
    container.resources = { ...container.resources, limits: { ...container.resources?.limits, memory: limit }, requests: { ...container.resources?.requests, memory: limit } };
  }
  const hook = preStopHandler(scenario.preStop, container.ports?.[0]?.name ?? container.ports?.[0]?.containerPort);
  const lifecycle = { ...container.lifecycle };
  if (hook) lifecycle.preStop = hook; else delete lifecycle.preStop;
  if (Object.keys(lifecycle).length) container.lifecycle = lifecycle; else delete container.lifecycle;
  return pod as V1Pod;
}

export function labPort(template: Record<string, any>): number {
  return template.spec.containers[0].ports[0].containerPort as number;
}
