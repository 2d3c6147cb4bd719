// kube-proxy's own record of its syncs: at --v=2 the iptables proxier logs "SyncProxyRules complete" with the
// time the sync took (pkg/proxy/iptables/proxier.go syncProxyRules), under a microsecond klog timestamp.
import { existsSync, readFileSync } from 'node:fs';

// I1130 14:06:38.196162   22958 proxier.go:757] "SyncProxyRules complete" ipFamily="IPv4" elapsed="73.036726ms"
const SYNC_DONE =
  /^I(\d\d)(\d\d) (\d\d):(\d\d):(\d\d)\.(\d{6})\s+\d+ \S+\] "SyncProxyRules complete" ipFamily="IPv4" elapsed="([^"]+)"/;

export interface ProxySync {
  /** Wall ms when the sync ended (klog writes local time and no year). */
  at: number;
  /** As kube-proxy wrote it, e.g. "73.036726ms". */
  elapsed: string;
}

/** The IPv4 proxier's completed syncs, in log order (the node's Services are IPv4; the IPv6 proxier syncs too). */
export function proxySyncsIn(text: string, year = new Date().getFullYear()): ProxySync[] {
  const syncs: ProxySync[] = [];
  for (const line of text.split('\n')) {
    const m = SYNC_DONE.exec(line);
    if (!m) continue;
    const [month, day, hour, minute, second, micros] = m.slice(1, 7).map(Number) as [
      number,
      number,
      number,
      number,
      number,
      number,
    ];
    syncs.push({
      at: new Date(year, month - 1, day, hour, minute, second).getTime() + micros / 1000,
      elapsed: m[7] ?? '',
    });
  }
  return syncs;
}

export function proxySyncs(logPath: string): ProxySync[] {
  return existsSync(logPath) ? proxySyncsIn(readFileSync(logPath, 'utf8')) : [];
}
