// kube-proxy's sync lines as the real node's kube-proxy (1.34.4, --v=2) wrote them: measure:proxy reads
// them to explain each delay, so a format it misreads would silently drop that explanation.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { proxySyncs, proxySyncsIn } from '../../dev/node/proxy-log.ts';

const LOG = `I1130 14:06:38.123132   22958 proxier.go:763] "Syncing iptables rules" ipFamily="IPv4" fullSync=true
I1130 14:06:38.196162   22958 proxier.go:757] "SyncProxyRules complete" ipFamily="IPv4" elapsed="73.036726ms"
I1130 14:06:38.196195   22958 proxier.go:763] "Syncing iptables rules" ipFamily="IPv6" fullSync=true
I1130 14:06:38.301021   22958 proxier.go:757] "SyncProxyRules complete" ipFamily="IPv6" elapsed="104.8ms"
W1130 14:06:39.000001   22958 proxier.go:768] "Sync failed" ipFamily="IPv4" retryingTime="30s"
I1130 14:06:39.829796   22958 proxier.go:763] "Syncing iptables rules" ipFamily="IPv4" fullSync=false
I1130 14:06:39.869095   22958 proxier.go:757] "SyncProxyRules complete" ipFamily="IPv4" elapsed="39.301287ms"
`;

describe("kube-proxy's sync log", () => {
  it('yields each IPv4 sync end in local time with microseconds, and what it took', () => {
    const syncs = proxySyncsIn(LOG, 2026);
    expect(syncs).toEqual([
      { at: new Date(2026, 10, 30, 14, 6, 38).getTime() + 196.162, elapsed: '73.036726ms' },
      { at: new Date(2026, 10, 30, 14, 6, 39).getTime() + 869.095, elapsed: '39.301287ms' },
    ]);
  });

  it('reads a log file, and gives nothing for a node that never ran kube-proxy', () => {
    const dir = mkdtempSync(join(tmpdir(), 'termlab-proxy-log-'));
    writeFileSync(join(dir, 'kube-proxy.log'), LOG);
    expect(proxySyncs(join(dir, 'kube-proxy.log')).map((s) => s.elapsed)).toEqual(['73.036726ms', '39.301287ms']);
    expect(proxySyncs(join(dir, 'missing.log'))).toEqual([]);
  });
});
