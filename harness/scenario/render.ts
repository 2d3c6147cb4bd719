// One pod from the template and one scenario. Only the fields the scenario is about change.
import type { V1Pod } from '@kubernetes/client-node';
import { podDeadlineSeconds } from '../safety/deadline.ts';
import { IDENTITY_ANNOTATION } from '../safety/identity.ts';
import { ENV_LABEL, HOLD_FINALIZER, ownershipLabels } from '../safety/labels.ts';
import { configureLabContainer } from '../../server/contract-schemas.ts';
import type { Scenario } from './schema.ts';

export interface RenderOptions {
  podName: string;
  owner: string;
  /** The caller's full name as the cluster reported it (a label value holds only 63 characters). */
  identity?: string;
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
    ...(options.identity ? { annotations: { ...pod.metadata?.annotations, [IDENTITY_ANNOTATION]: options.identity } } : {}),
    // Keeps the object, with its final container state, until termlab has read it.
    finalizers: [...(pod.metadata?.finalizers ?? []), HOLD_FINALIZER],
  };
  delete pod.metadata.generateName;
  pod.spec.terminationGracePeriodSeconds = scenario.terminationGracePeriodSeconds;
  pod.spec.activeDeadlineSeconds = Math.min(podDeadlineSeconds(scenario), scenario.activeDeadlineSeconds ?? Infinity);
  const container = pod.spec.containers[0];
  configureLabContainer(container, { image: options.image, mode: scenario.mode, preStop: scenario.preStop, termAllocateMiB: scenario.termAllocateMiB });
  if (scenario.memoryLimitMiB) {
    const limit = `${scenario.memoryLimitMiB}Mi`;
    container.resources = { ...container.resources, limits: { ...container.resources?.limits, memory: limit }, requests: { ...container.resources?.requests, memory: limit } };
  }
  return pod as V1Pod;
}

export function labPort(template: Record<string, any>): number {
  return template.spec.containers[0].ports[0].containerPort as number;
}
