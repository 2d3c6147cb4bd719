// The load pod of a verification: the lab image's load mode (server/load.ts), labelled with the
// run's ownership labels, bounded by activeDeadlineSeconds, so `termlab reap` and the kubelet
// remove it even when termlab is killed outright.
import { defaultLoadConnections } from '../../server/load.ts';
import { IDENTITY_ANNOTATION } from '../safety/identity.ts';
import { ownershipLabels } from '../safety/labels.ts';
import { ROLE_LABEL } from '../scenario/render-rollout.ts';
import type { EdgePlan, VerifyRequest } from '../observation/verification.ts';

/** The scenario label of every verification's objects. */
export const VERIFY_SCENARIO = 'verify';
/** The load's work figure when the path names none: only its time limit follows from it (work + 10 s). */
const DEFAULT_WORK_MS = 1000;
const WORK_MS_MAX = 60_000;

/** `?ms=N` in the path (the lab image's /work): how long each request is meant to take. */
export function workMsOf(path: string): number {
  const ms = new URL(path, 'http://x').searchParams.get('ms');
  return ms && /^\d+$/.test(ms) ? Math.min(WORK_MS_MAX, Math.max(1, Number(ms))) : DEFAULT_WORK_MS;
}

/** --connections by default: the load's own default for the rate and the path's work (server/load.ts). */
export const defaultConnections = (rate: number, path: string): number => defaultLoadConnections(rate, workMsOf(path));

export interface LoadPodOptions {
  name: string;
  owner: string;
  identity?: string;
  runId: string;
  target: string;
  durationMs: number;
  deadlineSeconds: number;
  /** Through an edge (contract C4): kept-alive connections, as browsers and services keep them, and its Host. */
  edge?: EdgePlan | null;
}

export function renderVerifyLoadPod(
  template: Record<string, any>,
  request: VerifyRequest,
  o: LoadPodOptions,
): Record<string, any> {
  const pod = structuredClone(template) as any;
  pod.metadata = {
    name: o.name,
    labels: { ...pod.metadata?.labels, ...ownershipLabels(o.owner, o.runId, VERIFY_SCENARIO), [ROLE_LABEL]: 'load' },
    ...(o.identity ? { annotations: { [IDENTITY_ANNOTATION]: o.identity } } : {}),
  };
  pod.spec.restartPolicy = 'Never';
  pod.spec.activeDeadlineSeconds = o.deadlineSeconds;
  const container = pod.spec.containers[0];
  container.image = request.loadImage;
  // A client, not a server: no port, no probe, no hook.
  delete container.ports;
  delete container.readinessProbe;
  delete container.livenessProbe;
  delete container.lifecycle;
  container.env = [
    { name: 'LAB_MODE', value: 'load' },
    { name: 'LOAD_TARGET', value: o.target },
    { name: 'LOAD_PATH', value: request.path },
    { name: 'LOAD_POD_HEADER', value: request.podHeader ?? 'x-pod-uid' },
    { name: 'LOAD_RATE', value: String(request.rate) },
    { name: 'LOAD_WORK_MS', value: String(workMsOf(request.path)) },
    { name: 'LOAD_DURATION_MS', value: String(o.durationMs) },
    { name: 'LOAD_CONNECTIONS', value: String(request.connections) },
    ...(request.method ? [{ name: 'LOAD_METHOD', value: request.method }] : []),
    ...(o.edge ? [{ name: 'LOAD_KEEPALIVE', value: '1' }] : []),
    ...(o.edge?.host ? [{ name: 'LOAD_HOST', value: o.edge.host }] : []),
  ];
  return pod;
}
