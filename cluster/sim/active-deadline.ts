// pkg/kubelet/active_deadline.go: a pod active longer than spec.activeDeadlineSeconds is evicted
// (ShouldEvict) and goes through the normal termination path, its grace included.
import type { PodSpec } from './pod-types.ts';

export const DEADLINE_EXCEEDED = {
  reason: 'DeadlineExceeded',
  message: 'Pod was active on the node longer than the specified deadline',
} as const;

/**
 * When the deadline passes (wall ms), if the pod has one. The status manager keeps startTime in whole
 * seconds (status_manager.go normalizeStatus) and the deadline counts from that, so it falls up to 1 s
 * before the start plus the seconds.
 */
export function activeDeadline(startedWall: number, spec: PodSpec): number | undefined {
  const seconds = spec.activeDeadlineSeconds;
  return typeof seconds === 'number' ? Math.floor(startedWall / 1000) * 1000 + seconds * 1000 : undefined;
}
