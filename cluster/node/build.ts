// Builds the node's programs from Go modules, skipping any whose inputs have not changed.
// Go's own module and build caches make a rebuild after a change incremental.
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { ETCD_VERSION, KUBE_VERSION, MODULE_DIR, paths } from './layout.ts';
import { sh } from './steps.ts';

function fingerprint(files: string[], extra: string): string {
  const hash = createHash('sha256').update(extra);
  for (const file of files) hash.update(readFileSync(join(MODULE_DIR, file)));
  return hash.digest('hex');
}

/** Builds only when the output is missing or its recorded inputs changed. */
function buildIfChanged(output: string, inputs: string[], extra: string, run: () => void): 'built' | 'up to date' {
  const stamp = `${output}.inputs`;
  const wanted = fingerprint(inputs, extra);
  if (existsSync(output) && existsSync(stamp) && readFileSync(stamp, 'utf8') === wanted) return 'up to date';
  mkdirSync(dirname(output), { recursive: true });
  run();
  writeFileSync(stamp, wanted);
  return 'built';
}

function versionFlags(): string {
  const [major, minor] = KUBE_VERSION.slice(1).split('.');
  const vars = { gitVersion: KUBE_VERSION, gitMajor: major, gitMinor: minor, gitTreeState: 'clean', buildDate: '1970-01-01T00:00:00Z' };
  // component-base and client-go each carry the version; Kubernetes' own build stamps both.
  return ['k8s.io/component-base/version', 'k8s.io/client-go/pkg/version']
    .flatMap((pkg) => Object.entries(vars).map(([k, v]) => `-X ${pkg}.${k}=${v}`)).join(' ');
}

export function buildKube(): string {
  const flags = versionFlags();
  return buildIfChanged(paths.kube, ['go.mod', 'go.sum', 'cmd/kube/main.go'], flags, () => {
    sh('go', ['build', '-trimpath', '-ldflags', flags, '-o', paths.kube, './cmd/kube'], { cwd: MODULE_DIR, stdio: ['ignore', 'pipe', 'pipe'] });
  });
}

/** kubectl of the node's own version, for machines whose kubectl predates WebSocket exec and port-forward. */
export function buildKubectl(output: string): string {
  const flags = versionFlags();
  return buildIfChanged(output, ['go.mod', 'go.sum'], flags, () => {
    sh('go', ['build', '-trimpath', '-ldflags', flags, '-o', output, 'k8s.io/kubernetes/cmd/kubectl'], { cwd: MODULE_DIR, stdio: ['ignore', 'pipe', 'pipe'] });
  });
}

export function buildEtcd(): string {
  return buildIfChanged(paths.etcd, ['etcd/go.mod', 'etcd/go.sum'], ETCD_VERSION, () => {
    sh('go', ['build', '-trimpath', '-o', paths.etcd, 'go.etcd.io/etcd/server/v3'], { cwd: join(MODULE_DIR, 'etcd') });
  });
}

export function buildPause(): string {
  return buildIfChanged(paths.pause, ['cmd/pause/main.go'], 'static', () => {
    sh('go', ['build', '-trimpath', '-o', paths.pause, './cmd/pause'], { cwd: MODULE_DIR, env: { ...process.env, CGO_ENABLED: '0' } });
  });
}
