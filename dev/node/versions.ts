// Which Kubernetes release the node runs, and the Go modules that build it. The default is pinned by
// dev/node/go.mod (and etcd/go.mod); any other served patch gets a generated module under
// STATE/src/, its staging modules and its etcd read from that release's own files, never guessed.
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { DEFAULT_ETCD_VERSION, DEFAULT_KUBE_VERSION, MODULE_DIR, paths } from './layout.ts';
import { TermlabError } from '../../lib/errors.ts';
import { sh, StepError } from './steps.ts';
import { goAtLeast, goDirective, goEnvFor } from './toolchain.ts';

/** The go line of generated modules unless a release needs more (dev/node/go.mod's). */
const MIN_GO = '1.26.0';

// A release or a pre-release tag as Kubernetes cuts them (v1.38.0-alpha.1, -beta.0, -rc.1): a minor's
// pre-releases come weeks before its .0, and the Go module proxy serves them like any tag.
const VERSION = /^v1\.(\d+)\.(\d+)(-(alpha|beta|rc)\.\d+)?$/;

/** `--kube v1.35.4` (or TERMLAB_NODE_KUBE), else the default. A malformed one is refused before anything runs. */
export function requestedVersion(flag: string | undefined, env: NodeJS.ProcessEnv = process.env): string {
  const given = flag ?? env.TERMLAB_NODE_KUBE;
  if (given === undefined || given === '') return DEFAULT_KUBE_VERSION;
  const version = given.startsWith('v') ? given : `v${given}`;
  if (!VERSION.test(version))
    throw new TermlabError(
      'USAGE',
      `--kube${flag === undefined ? ' (TERMLAB_NODE_KUBE)' : ''}: expected a release such as v1.37.2 or v1.38.0-beta.0, got ${JSON.stringify(given)}`,
    );
  return version;
}

/** The flag that picks the release, as cluster:up, cluster:build and tools:kubectl take it. */
export const KUBE_FLAG = { kube: { type: 'string' } } as const;

export const minorOf = (version: string): string => version.slice(1).split('.').slice(0, 2).join('.');

/** The staging modules' tag of a release: v1.38.0-beta.0 -> v0.38.0-beta.0 (each k8s.io/* staging repo tags v0.Y.Z). */
export const stagingVersion = (kubeVersion: string): string => `v0.${kubeVersion.slice(3)}`;

/** The version cluster:up last brought up (null when none is up). */
export function upVersion(): string | null {
  return existsSync(paths.upVersion) ? readFileSync(paths.upVersion, 'utf8').trim() || null : null;
}

/** The feature gates the node that is up was started with (`none` for none; null when none is up or unrecorded). */
export function upGates(): string | null {
  return existsSync(paths.upGates) ? readFileSync(paths.upGates, 'utf8').trim() || null : null;
}

interface Downloaded {
  Dir?: string;
  GoMod?: string;
  Error?: string;
}

function download(module: string, cwd: string): Downloaded {
  const out = sh('go', ['mod', 'download', '-json', module], { cwd, env: goEnvFor(cwd) });
  const info = JSON.parse(out) as Downloaded;
  if (info.Error || !info.Dir || !info.GoMod)
    throw new StepError(`go mod download ${module}: ${info.Error ?? 'no module directory'}`);
  return info;
}

/** The Go a release's go.mod asks for, read from the proxy's .mod file (no toolchain needed for that). */
function releaseGo(module: string, cwd: string): string {
  const result = spawnSync('go', ['mod', 'download', '-json', module], {
    cwd,
    encoding: 'utf8',
    env: { ...process.env, GOTOOLCHAIN: 'local' },
  });
  const info = JSON.parse(result.stdout || '{}') as Downloaded;
  // "requires go >= 1.27.0" still names the .mod it read.
  const goMod = info.GoMod && existsSync(info.GoMod) ? readFileSync(info.GoMod, 'utf8') : '';
  const required = goDirective(goMod);
  if (!required) throw new StepError(`go mod download ${module}: ${info.Error ?? result.stderr ?? 'no go.mod'}`);
  return goAtLeast(required, MIN_GO) ? required : MIN_GO;
}

/** Modules a release requires that the proxy refuses, and the folder in dev/node that stands in for each. */
export const STAND_INS: Record<string, string> = { 'sigs.k8s.io/iptables-wrappers': 'iptables-wrappers' };

/** The release's required modules as `module version` pairs, from its go.mod text. */
export function requiredModules(goMod: string): Map<string, string> {
  const found = new Map<string, string>();
  for (const m of goMod.matchAll(/^\s*(?:require\s+)?([\w.~/-]+\.[\w.~/-]+)\s+(v\S+)/gm)) found.set(m[1]!, m[2]!);
  return found;
}

/** `replace` lines for the stand-ins a release needs, each copied into the module so it builds on its own. */
function standIns(goMod: string, kubeDir: string): string[] {
  const lines: string[] = [];
  const required = requiredModules(goMod);
  for (const [module, folder] of Object.entries(STAND_INS)) {
    const version = required.get(module);
    if (!version) continue;
    try {
      download(`${module}@${version}`, kubeDir);
      continue; // served: the real one
    } catch (error) {
      console.log(
        `  ${module}@${version} is not served here (${(error as Error).message.split('\n')[0]}): dev/node/${folder} stands in`,
      );
    }
    cpSync(join(MODULE_DIR, folder), join(kubeDir, folder), { recursive: true });
    lines.push(`\t${module} => ./${folder}`);
  }
  return lines;
}

/** The etcd a release names in its build/dependencies.yaml. */
export function etcdOf(kubeDir: string): string {
  const deps = readFileSync(join(kubeDir, 'build', 'dependencies.yaml'), 'utf8');
  const match = /-\s*name:\s*"etcd"\s*\n\s*version:\s*([0-9.]+)/.exec(deps);
  if (!match) throw new StepError(`${kubeDir}/build/dependencies.yaml names no etcd version`);
  return `v${match[1]}`;
}

export interface NodeModules {
  kubeVersion: string;
  kubeDir: string;
  etcdVersion: string;
  etcdDir: string;
}

/** The module directories that build this version; generated (once) for a non-default version. */
export function modulesFor(kubeVersion: string): NodeModules {
  if (kubeVersion === DEFAULT_KUBE_VERSION) {
    return { kubeVersion, kubeDir: MODULE_DIR, etcdVersion: DEFAULT_ETCD_VERSION, etcdDir: join(MODULE_DIR, 'etcd') };
  }
  const kubeDir = join(paths.src, `kube-${kubeVersion}`);
  mkdirSync(kubeDir, { recursive: true });
  const staging = stagingVersion(kubeVersion);
  // The marker is written last: a generation cut short is redone whole.
  if (!existsSync(join(kubeDir, '.generated'))) {
    writeFileSync(join(kubeDir, 'go.mod'), `module termlab.dev/dev/node\n\ngo ${MIN_GO}\n`);
    // Served at all? A clear error before the long part.
    let release: Downloaded;
    let goLine = MIN_GO;
    try {
      // The release's own go line (1.38: 1.27.0) picks the toolchain for every go command in this module.
      goLine = releaseGo(`k8s.io/kubernetes@${kubeVersion}`, kubeDir);
      writeFileSync(join(kubeDir, 'go.mod'), `module termlab.dev/dev/node\n\ngo ${goLine}\n`);
      release = download(`k8s.io/kubernetes@${kubeVersion}`, kubeDir);
    } catch (error) {
      throw new StepError(
        `--kube ${kubeVersion}: the Go module proxy does not serve k8s.io/kubernetes@${kubeVersion} (${(error as Error).message})`,
      );
    }
    // k8s.io/kubernetes points each staging module at ./staging; pin every one it names to the same release.
    const stagingModules = [
      ...readFileSync(release.GoMod!, 'utf8').matchAll(/^\s*(k8s\.io\/[\w.-]+) => \.\/staging\//gm),
    ].map((m) => m[1]!);
    const replaces = [
      ...stagingModules.map((m) => `\t${m} => ${m} ${staging}`),
      ...standIns(readFileSync(release.GoMod!, 'utf8'), kubeDir),
    ].join('\n');
    writeFileSync(
      join(kubeDir, 'go.mod'),
      `module termlab.dev/dev/node\n\ngo ${goLine}\n\nrequire (\n\tk8s.io/kubernetes ${kubeVersion}\n\tk8s.io/component-base ${staging}\n)\n\nreplace (\n${replaces}\n)\n`,
    );
    mkdirSync(join(kubeDir, 'cmd', 'kube'), { recursive: true });
    writeFileSync(join(kubeDir, 'cmd', 'kube', 'main.go'), readFileSync(join(MODULE_DIR, 'cmd', 'kube', 'main.go')));
    sh('go', ['mod', 'tidy'], { cwd: kubeDir, env: goEnvFor(kubeDir) });
    writeFileSync(join(kubeDir, '.generated'), kubeVersion);
  }
  // A stand-in the module uses is copied again each time, so an edit in dev/node reaches the build.
  for (const folder of Object.values(STAND_INS))
    if (existsSync(join(kubeDir, folder))) cpSync(join(MODULE_DIR, folder), join(kubeDir, folder), { recursive: true });
  const etcdVersion = etcdOf(download(`k8s.io/kubernetes@${kubeVersion}`, kubeDir).Dir!);
  if (etcdVersion === DEFAULT_ETCD_VERSION)
    return { kubeVersion, kubeDir, etcdVersion, etcdDir: join(MODULE_DIR, 'etcd') };
  const etcdDir = join(paths.src, `etcd-${etcdVersion}`);
  if (!existsSync(join(etcdDir, '.generated'))) {
    mkdirSync(etcdDir, { recursive: true });
    writeFileSync(join(etcdDir, 'go.mod'), `module termlab.dev/dev/node/etcd\n\ngo ${MIN_GO}\n`);
    sh('go', ['get', `go.etcd.io/etcd/server/v3@${etcdVersion}`], { cwd: etcdDir, env: goEnvFor(etcdDir) });
    writeFileSync(join(etcdDir, '.generated'), etcdVersion);
  }
  return { kubeVersion, kubeDir, etcdVersion, etcdDir };
}
