// Which Kubernetes release the node runs, and the Go modules that build it. The default is pinned by
// dev/node/go.mod (and etcd/go.mod); any other served patch gets a generated module under
// STATE/src/, its staging modules and its etcd read from that release's own files, never guessed.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { DEFAULT_ETCD_VERSION, DEFAULT_KUBE_VERSION, MODULE_DIR, paths } from './layout.ts';
import { TermlabError } from '../../lib/errors.ts';
import { sh, StepError } from './steps.ts';

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

interface Downloaded {
  Dir?: string;
  GoMod?: string;
  Error?: string;
}

function download(module: string, cwd: string): Downloaded {
  const out = sh('go', ['mod', 'download', '-json', module], { cwd });
  const info = JSON.parse(out) as Downloaded;
  if (info.Error || !info.Dir || !info.GoMod)
    throw new StepError(`go mod download ${module}: ${info.Error ?? 'no module directory'}`);
  return info;
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
    writeFileSync(join(kubeDir, 'go.mod'), 'module termlab.dev/dev/node\n\ngo 1.26.0\n');
    // Served at all? A clear error before the long part.
    let release: Downloaded;
    try {
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
    const replaces = stagingModules.map((m) => `\t${m} => ${m} ${staging}`).join('\n');
    writeFileSync(
      join(kubeDir, 'go.mod'),
      `module termlab.dev/dev/node\n\ngo 1.26.0\n\nrequire (\n\tk8s.io/kubernetes ${kubeVersion}\n\tk8s.io/component-base ${staging}\n)\n\nreplace (\n${replaces}\n)\n`,
    );
    mkdirSync(join(kubeDir, 'cmd', 'kube'), { recursive: true });
    writeFileSync(join(kubeDir, 'cmd', 'kube', 'main.go'), readFileSync(join(MODULE_DIR, 'cmd', 'kube', 'main.go')));
    sh('go', ['mod', 'tidy'], { cwd: kubeDir });
    writeFileSync(join(kubeDir, '.generated'), kubeVersion);
  }
  const etcdVersion = etcdOf(download(`k8s.io/kubernetes@${kubeVersion}`, kubeDir).Dir!);
  if (etcdVersion === DEFAULT_ETCD_VERSION)
    return { kubeVersion, kubeDir, etcdVersion, etcdDir: join(MODULE_DIR, 'etcd') };
  const etcdDir = join(paths.src, `etcd-${etcdVersion}`);
  if (!existsSync(join(etcdDir, '.generated'))) {
    mkdirSync(etcdDir, { recursive: true });
    writeFileSync(join(etcdDir, 'go.mod'), 'module termlab.dev/dev/node/etcd\n\ngo 1.26.0\n');
    sh('go', ['get', `go.etcd.io/etcd/server/v3@${etcdVersion}`], { cwd: etcdDir });
    writeFileSync(join(etcdDir, '.generated'), etcdVersion);
  }
  return { kubeVersion, kubeDir, etcdVersion, etcdDir };
}
