// The build plumbing of the node's edge (dev/node/traefik.ts, dev/node/traefik/README.md), without a node or
// Go: the release flags, the version Traefik's go.mod pins for a stand-in's base, the stand-ins themselves,
// and the skip when nothing changed.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { buildIfChanged } from '../../dev/node/build.ts';
import {
  HTTP_AUTH,
  requiredVersion,
  STAND_INS_DIR,
  TRAEFIK_VERSION,
  traefikBuildArgs,
  traefikStandIns,
  UNAVAILABLE_DNS_PROVIDERS,
} from '../../dev/node/traefik.ts';

const README = join(STAND_INS_DIR, '..', 'README.md');

describe("Traefik's build", () => {
  it('takes the flags of its release: trimmed, stripped, version stamped, ./cmd/traefik', () => {
    const args = traefikBuildArgs('/out/traefik');
    expect(args.slice(0, 3)).toEqual(['build', '-mod=mod', '-trimpath']);
    expect(args[args.indexOf('-ldflags') + 1]).toBe(
      '-s -w -X github.com/traefik/traefik/v3/pkg/version.Version=v3.7.13',
    );
    expect(args.slice(-3)).toEqual(['-o', '/out/traefik', './cmd/traefik']);
    expect(TRAEFIK_VERSION).toBe('v3.7.13');
  });

  it("reads a requirement's version from Traefik's go.mod, whether in a block or on its own line", () => {
    const goMod = [
      'module github.com/traefik/traefik/v3',
      '',
      'require (',
      '\tgithub.com/go-acme/lego/v5 v5.4.1',
      '\tgithub.com/go-acme/lego/v4 v4.35.2 // indirect',
      ')',
      'require github.com/abbot/go-http-auth v0.0.0-00010101000000-000000000000',
    ].join('\n');
    expect(requiredVersion(goMod, 'github.com/go-acme/lego/v5')).toBe('v5.4.1');
    expect(requiredVersion(goMod, 'github.com/abbot/go-http-auth')).toBe('v0.0.0-00010101000000-000000000000');
    expect(() => requiredVersion(goMod, 'github.com/go-acme/lego')).toThrow(
      /go\.mod does not require github\.com\/go-acme\/lego$/,
    );
  });

  it('has one stand-in per refused module, each a Go file of the package it replaces', () => {
    expect(traefikStandIns()).toEqual([
      'dynamic-ext/ext.go',
      'dynamic-ext/go.mod',
      'go-http-auth/stale.go',
      'lego-dns/unavailable.go',
    ]);
    const pkg = (f: string) => /^package (\w+)$/m.exec(readFileSync(join(STAND_INS_DIR, f), 'utf8'))?.[1];
    expect(pkg('dynamic-ext/ext.go')).toBe('ext');
    expect(pkg('go-http-auth/stale.go')).toBe('auth');
    // Renamed per provider when written into lego's copy.
    expect(pkg('lego-dns/unavailable.go')).toBe('unavailable');
    expect(readFileSync(join(STAND_INS_DIR, 'dynamic-ext/go.mod'), 'utf8')).toMatch(
      /^module github\.com\/traefik\/traefik\/dynamic\/ext$/m,
    );
  });

  it('says in its README what each stand-in replaces', () => {
    const readme = readFileSync(README, 'utf8');
    for (const provider of UNAVAILABLE_DNS_PROVIDERS) expect(readme).toContain(`\`${provider}\``);
    expect(readme).toContain(`${HTTP_AUTH.path}@${HTTP_AUTH.version}`);
    expect(readme).toContain('github.com/traefik/traefik/dynamic/ext');
    expect(readme).toContain(traefikBuildArgs('x').find((a) => a.startsWith('-s -w')));
  });
});

describe('a cached build (buildIfChanged)', () => {
  let dir: string;
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('builds when the output is missing, skips when nothing changed, builds again when an input or the flags change', () => {
    dir = mkdtempSync(join(tmpdir(), 'termlab-build-'));
    writeFileSync(join(dir, 'stand-in.go'), 'package a\n');
    const output = join(dir, 'bin', 'traefik');
    let runs = 0;
    const build = (flags: string) =>
      buildIfChanged(output, dir, ['stand-in.go'], flags, () => {
        runs++;
        writeFileSync(output, 'binary');
      });
    expect(build('-s -w')).toBe('built');
    expect(build('-s -w')).toBe('up to date');
    writeFileSync(join(dir, 'stand-in.go'), 'package b\n');
    expect(build('-s -w')).toBe('built');
    expect(build('-trimpath')).toBe('built');
    rmSync(output);
    expect(build('-trimpath')).toBe('built');
    expect(runs).toBe(4);
  });
});
