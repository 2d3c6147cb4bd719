// Which Go builds a release's module: Kubernetes 1.38's go.mod says `go 1.27.0`, this machine has 1.26.8,
// and the one newer Go served here is go1.27.3 (the go command fetches it as a module when GOTOOLCHAIN names it).
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { goAtLeast, goDirective, goEnvFor, NEWER_GO, toolchainFor } from '../../dev/node/toolchain.ts';

describe("the Go for a node module's go line", () => {
  it('reads the go directive', () => {
    expect(goDirective('module k8s.io/kubernetes\n\ngo 1.27.0\n\ngodebug default=go1.27\n')).toBe('1.27.0');
    expect(goDirective('module x\ngo 1.26\n')).toBe('1.26');
    expect(goDirective('module x\n')).toBeUndefined();
  });

  it('compares Go versions by number', () => {
    expect(goAtLeast('go1.26.8', '1.26.0')).toBe(true);
    expect(goAtLeast('go1.26.8', '1.27.0')).toBe(false);
    expect(goAtLeast('go1.27.3', '1.27')).toBe(true);
    expect(goAtLeast('1.10.0', '1.9.9')).toBe(true);
  });

  it("keeps the machine's Go where it will do, and names the newer one where not", () => {
    expect(toolchainFor('1.26.0', 'go1.26.8')).toBeUndefined();
    expect(toolchainFor(undefined, 'go1.26.8')).toBeUndefined();
    expect(toolchainFor('1.27.0', 'go1.26.8')).toBe(NEWER_GO);
    expect(() => toolchainFor('1.28.0', 'go1.26.8')).toThrow(/needs Go 1\.28\.0; this machine has go1\.26\.8/);
  });

  it('sets GOTOOLCHAIN only for a module whose go line needs it', () => {
    const dir = mkdtempSync(join(tmpdir(), 'termlab-toolchain-'));
    writeFileSync(join(dir, 'go.mod'), 'module termlab.dev/dev/node\n\ngo 1.27.0\n');
    expect(goEnvFor(dir, 'go1.26.8').GOTOOLCHAIN).toBe('go1.27.3');
    writeFileSync(join(dir, 'go.mod'), 'module termlab.dev/dev/node\n\ngo 1.26.0\n');
    expect(goEnvFor(dir, 'go1.26.8').GOTOOLCHAIN).toBe(process.env.GOTOOLCHAIN);
  });
});
