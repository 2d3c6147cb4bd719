// The real kubelet's own record of when it launched a preStop hook: at --v=3 it logs
// "Running preStop hook" (kuberuntime_container.go executePreStopHook), with a microsecond klog
// timestamp. ("Killing container with a grace period", at --v=2, comes after the hook.)
import { existsSync, readFileSync } from 'node:fs';

// I1130 10:31:30.123456   12345 kuberuntime_container.go:740] "Running preStop hook" pod="ns/name" podUID="..."
const RUNNING_PRESTOP =
  /^I(\d\d)(\d\d) (\d\d):(\d\d):(\d\d)\.(\d{6})\s+\d+ \S+\] "Running preStop hook".*podUID="([^"]+)"/;

/** podUID -> wall ms of the kubelet's first "Running preStop hook" line for it (klog times are UTC on the node). */
export function kubeletHookLaunches(logPath: string, year = new Date().getUTCFullYear()): Map<string, number> {
  const launches = new Map<string, number>();
  if (!existsSync(logPath)) return launches;
  for (const line of readFileSync(logPath, 'utf8').split('\n')) {
    const m = RUNNING_PRESTOP.exec(line);
    if (!m || launches.has(m[7]!)) continue;
    const [month, day, hour, minute, second, micros] = m.slice(1, 7).map(Number) as [
      number,
      number,
      number,
      number,
      number,
      number,
    ];
    launches.set(m[7]!, Date.UTC(year, month - 1, day, hour, minute, second) + micros / 1000);
  }
  return launches;
}
