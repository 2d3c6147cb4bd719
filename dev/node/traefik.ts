// Traefik for the node's edge (issue #42, docs/edge.md), built from its Go module like containerd: a copy of
// github.com/traefik/traefik/v3 under STATE/src, so its own go.mod (its replaces, its build list) rules the
// build, and `go build ./cmd/traefik`. Three things the module proxy here does not serve get stand-ins
// (dev/node/traefik/README.md says exactly what differs); the providers and the proxy are Traefik's own.
import { createHash } from 'node:crypto';
import { chmodSync, cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { MODULE_DIR, paths, STATE } from './layout.ts';
import { sh, StepError } from './steps.ts';
import { goEnvFor } from './toolchain.ts';

export const TRAEFIK_VERSION = 'v3.7.13';
/** The Gateway API whose standard-channel CRDs the node installs (Traefik v3.7.13 is built against v1.6.1). */
export const GATEWAY_API_VERSION = 'v1.6.3';
export const TRAEFIK_IMAGE = `docker.io/library/traefik:${TRAEFIK_VERSION}`;
const MODULE = 'github.com/traefik/traefik/v3';
export const STAND_INS_DIR = join(MODULE_DIR, 'traefik', '_stand-ins');

/** Traefik's fork of go-http-auth is refused; upstream at the fork's base, plus the one method it added. */
export const HTTP_AUTH = { path: 'github.com/abbot/go-http-auth', version: 'v0.4.1-0.20220112235402-e1cee1c72f2f' };
const LEGO = 'github.com/go-acme/lego/v5';
/** lego's DNS providers whose cloud SDKs the proxy refuses: each becomes a provider that always fails. */
export const UNAVAILABLE_DNS_PROVIDERS = [
  'edgedns',
  'huaweicloud',
  'oraclecloud',
  'sakuracloud',
  'ucloud',
  'yandexcloud',
];

export function traefikBinary(version = TRAEFIK_VERSION): string {
  return join(STATE, 'bin', `traefik-${version}`, 'traefik');
}

/** The stand-ins' sources, sorted, relative to STAND_INS_DIR: build inputs. */
export function traefikStandIns(): string[] {
  return (readdirSync(STAND_INS_DIR, { recursive: true }) as string[])
    .filter((f) => f.endsWith('.go') || f.endsWith('go.mod'))
    .sort();
}

function standInHash(version: string): string {
  const hash = createHash('sha256').update(version);
  for (const file of traefikStandIns()) hash.update(file).update(readFileSync(join(STAND_INS_DIR, file)));
  return hash.digest('hex');
}

/** A module's directory in the module cache, downloading it if needed. */
export function moduleDir(path: string, version: string): string {
  mkdirSync(paths.src, { recursive: true });
  const info = JSON.parse(sh('go', ['mod', 'download', '-json', `${path}@${version}`], { cwd: paths.src })) as {
    Dir?: string;
    Error?: string;
  };
  if (!info.Dir) throw new StepError(`go mod download ${path}@${version}: ${info.Error ?? 'no directory'}`);
  return info.Dir;
}

/** A writable copy of a module-cache directory (its files are read-only there). */
function copyModule(from: string, to: string): void {
  rmSync(to, { recursive: true, force: true });
  cpSync(from, to, { recursive: true });
  sh('chmod', ['-R', 'u+w', to]);
}

/** The version of a module Traefik's go.mod requires (`\tpath vX.Y.Z`). */
export function requiredVersion(goMod: string, path: string): string {
  const escaped = path.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
  const found = new RegExp(`^\\s*(?:require\\s+)?${escaped}\\s+(v\\S+)`, 'm').exec(goMod)?.[1];
  if (!found) throw new StepError(`${MODULE}'s go.mod does not require ${path}`);
  return found;
}

/** The generated module that builds Traefik: made again when the version or a stand-in changes. */
export function traefikModule(version = TRAEFIK_VERSION): string {
  const dir = join(paths.src, `traefik-${version}`);
  const marker = join(dir, '.generated');
  const wanted = standInHash(version);
  if (existsSync(marker) && readFileSync(marker, 'utf8') === wanted) return dir;
  copyModule(moduleDir(MODULE, version), dir);
  // A nested module of Traefik's repository, so not in the v3 module's zip; go.mod points at it.
  const ext = join(dir, 'pkg', 'config', 'dynamic', 'ext');
  mkdirSync(ext, { recursive: true });
  for (const f of ['ext.go', 'go.mod']) cpSync(join(STAND_INS_DIR, 'dynamic-ext', f), join(ext, f));
  const auth = join(dir, 'termlab', 'go-http-auth');
  copyModule(moduleDir(HTTP_AUTH.path, HTTP_AUTH.version), auth);
  cpSync(join(STAND_INS_DIR, 'go-http-auth', 'stale.go'), join(auth, 'stale.go'));
  const lego = join(dir, 'termlab', 'lego');
  copyModule(moduleDir(LEGO, requiredVersion(readFileSync(join(dir, 'go.mod'), 'utf8'), LEGO)), lego);
  const unavailable = readFileSync(join(STAND_INS_DIR, 'lego-dns', 'unavailable.go'), 'utf8');
  for (const name of UNAVAILABLE_DNS_PROVIDERS) {
    const pkg = join(lego, 'providers', 'dns', name);
    rmSync(pkg, { recursive: true, force: true });
    mkdirSync(pkg, { recursive: true });
    writeFileSync(join(pkg, 'unavailable.go'), unavailable.replace(/^package unavailable$/m, `package ${name}`));
  }
  const env = goEnvFor(dir);
  sh('go', ['mod', 'edit', `-replace=${HTTP_AUTH.path}=./termlab/go-http-auth`, `-replace=${LEGO}=./termlab/lego`], {
    cwd: dir,
    env,
  });
  chmodSync(dir, 0o755);
  writeFileSync(marker, wanted);
  return dir;
}

/** The flags of Traefik's own release build: static, trimmed, its version stamped. */
export function traefikBuildArgs(output: string, version = TRAEFIK_VERSION): string[] {
  return [
    'build',
    // The stand-ins' own go.mod files name older requirements than Traefik's go.sum holds sums for.
    '-mod=mod',
    '-trimpath',
    '-ldflags',
    `-s -w -X ${MODULE}/pkg/version.Version=${version}`,
    '-o',
    output,
    './cmd/traefik',
  ];
}
