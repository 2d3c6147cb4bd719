// The real kubelet's own record of when it began a container's kill sequence: at --v=2 it logs
// "Killing container with a grace period" (kuberuntime_container.go killContainer) right before
// executePreStopHook launches the hook, with a microsecond klog timestamp.
import { existsSync, readFileSync } from 'node:fs';

// I1130 10:31:30.123456   12345 kuberuntime_container.go:866] "Killing container with a grace period" pod="ns/name" podUID="..."
const KILLING = /^I(\d\d)(\d\d) (\d\d):(\d\d):(\d\d)\.(\d{6})\s+\d+ \S+\] "Killing container with a grace period".*podUID="([^"]+)"/;

/** podUID -> wall ms of the kubelet's first "Killing container" line for it (klog times are UTC on the node). */
export function kubeletHookLaunches(logPath: string, year = new Date().getUTCFullYear()): Map<string, number> {
  const launches = new Map<string, number>();
  if (!existsSync(logPath)) return launches;
  for (const line of readFileSync(logPath, 'utf8').split('\n')) {
    const m = KILLING.exec(line);
    if (!m || launches.has(m[7]!)) continue;
    const [month, day, hour, minute, second, micros] = m.slice(1, 7).map(Number) as [number, number, number, number, number, number];
    launches.set(m[7]!, Date.UTC(year, month - 1, day, hour, minute, second) + micros / 1000);
  }
  return launches;
}
