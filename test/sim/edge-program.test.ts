// The simulated Traefik as a program: it refuses a flag it does not know and a bad value, naming the flag, as
// Traefik refuses one (exit 1); and its throttle applies a change at once after a quiet spell, else at the end of
// the window with only the newest configuration (aggregator.go maybeThrottledProvide).
import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { parseEdgeArgs } from '../../cluster/sim/edge/flags.ts';
import { IDLE_CONN_TIMEOUT_MS, upstreamAgent } from '../../cluster/sim/edge/forward.ts';
import { ProviderThrottle } from '../../cluster/sim/edge/throttle.ts';
import { edgeBundle } from '../../cluster/sim/runtime.ts';

function runEdge(args: string[]): Promise<{ code: number | null; stderr: string }> {
  return edgeBundle().then(
    (bundle) =>
      new Promise((resolve) => {
        const child = spawn(process.execPath, [bundle, ...args], { stdio: ['ignore', 'ignore', 'pipe'] });
        let stderr = '';
        child.stderr.on('data', (c: Buffer) => {
          stderr += c;
        });
        child.on('close', (code) => resolve({ code, stderr }));
      }),
  );
}

describe('the simulated Traefik program', () => {
  it('refuses an unknown flag and a bad entry point, naming them, with exit 1', async () => {
    const unknown = await runEdge(['--entryPoints.web.address=:8000', '--providers.kubernetescrd']);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('--providers.kubernetescrd: not a flag');
    const bad = await runEdge(['--entryPoints.web.address=eight-thousand']);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('--entryPoints.web.address: expected [host]:port, got "eight-thousand"');
  });

  it('reads the manifest flags as Traefik does (case-insensitive names, the kept header as written)', () => {
    const config = parseEdgeArgs([
      '--entryPoints.web.address=:8000',
      '--providers.kubernetesgateway',
      '--providers.kubernetesingress.ingressClass=traefik',
      '--providers.kubernetesgateway.statusAddress.service.name=traefik',
      '--providers.kubernetesgateway.statusAddress.service.namespace=termlab-edge',
      '--accesslog.fields.headers.names.X-Termlab-Request=keep',
      '--providers.providersThrottleDuration=500ms',
      '--global.checkNewVersion=false',
      '--global.sendAnonymousUsage=false',
    ]);
    expect(config.entryPoints.get('web')).toBe(8000);
    expect(config.gateway?.statusService).toEqual({ name: 'traefik', namespace: 'termlab-edge' });
    expect(config.ingress?.ingressClass).toBe('traefik');
    expect(config.keptHeaders).toEqual(['X-Termlab-Request']);
    expect(config.throttleMs).toBe(500);
  });

  it('applies a change at once after a quiet spell, then holds the window and keeps only the newest', async () => {
    const applied: string[] = [];
    let windowEnded: () => void = () => {};
    const throttle = new ProviderThrottle<string>(50, (value) => {
      applied.push(value);
      if (applied.length === 2) windowEnded();
    });
    throttle.offer('a');
    // Within the window: held, and only the newest survives.
    throttle.offer('b');
    throttle.offer('c');
    expect(applied).toEqual(['a']);
    await new Promise<void>((resolve) => {
      windowEnded = resolve;
    });
    throttle.stop();
    expect(applied).toEqual(['a', 'c']);
  });
});

describe("the simulated Traefik's upstream pool", () => {
  it("keeps an idle connection for IdleConnTimeout whatever the app's Keep-Alive hint says (Go ignores it)", () => {
    const calls: number[] = [];
    const socket = {
      timeout: 0,
      setKeepAlive: () => {},
      unref: () => {},
      setTimeout(ms: number) {
        calls.push(ms);
        this.timeout = ms;
      },
      // The answer of a Node app (keepAliveTimeout 5 s): Node's own Agent would idle this socket out after 4 s.
      _httpMessage: { res: { headers: { 'keep-alive': 'timeout=5' } } },
    };
    expect(upstreamAgent.keepSocketAlive(socket as any)).toBe(true);
    expect(calls).toEqual([IDLE_CONN_TIMEOUT_MS]);
  });
});
