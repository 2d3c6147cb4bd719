// Builds the node's programs from Go modules, one directory per Kubernetes version, skipping any whose
// inputs have not changed. Go's own module and build caches make a rebuild after a change incremental.
import { createHash } from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { binaries, MODULE_DIR, paths } from './layout.ts';
import { sh, step } from './steps.ts';
import { CONTAINERD_VERSION, containerdBinaries, containerdBuilds, containerdModule } from './containerd.ts';
import { goEnvFor } from './toolchain.ts';
import {
  STAND_INS_DIR,
  traefikStandIns,
  TRAEFIK_VERSION,
  traefikBinary,
  traefikBuildArgs,
  traefikModule,
} from './traefik.ts';
import { modulesFor, type NodeModules, STAND_INS } from './versions.ts';

function fingerprint(dir: string, files: string[], extra: string): string {
  const hash = createHash('sha256').update(extra);
  for (const file of files) hash.update(readFileSync(join(dir, file)));
  return hash.digest('hex');
}

/** Builds only when the output is missing or its recorded inputs changed. */
export function buildIfChanged(
  output: string,
  dir: string,
  inputs: string[],
  extra: string,
  run: () => void,
): 'built' | 'up to date' {
  const stamp = `${output}.inputs`;
  const wanted = fingerprint(dir, inputs, extra);
  if (existsSync(output) && existsSync(stamp) && readFileSync(stamp, 'utf8') === wanted) return 'up to date';
  mkdirSync(dirname(output), { recursive: true });
  run();
  writeFileSync(stamp, wanted);
  return 'built';
}

function versionFlags(kubeVersion: string): string {
  const [major, minor] = kubeVersion.slice(1).split('.');
  const vars = {
    gitVersion: kubeVersion,
    gitMajor: major,
    gitMinor: minor,
    gitTreeState: 'clean',
    buildDate: '1970-01-01T00:00:00Z',
  };
  // component-base and client-go each carry the version; Kubernetes' own build stamps both.
  return ['k8s.io/component-base/version', 'k8s.io/client-go/pkg/version']
    .flatMap((pkg) => Object.entries(vars).map(([k, v]) => `-X ${pkg}.${k}=${v}`))
    .join(' ');
}

/** The sources of the stand-ins a generated module holds (dev/node/iptables-wrappers), as build inputs. */
function standInFiles(kubeDir: string): string[] {
  // dev/node itself (the default's module) holds the originals, which it does not build.
  if (kubeDir === MODULE_DIR) return [];
  return Object.values(STAND_INS)
    .filter((folder) => existsSync(join(kubeDir, folder)))
    .flatMap((folder) =>
      (readdirSync(join(kubeDir, folder), { recursive: true }) as string[])
        .filter((f) => f.endsWith('.go') || f.endsWith('go.mod'))
        .sort()
        .map((f) => join(folder, f)),
    );
}

export function buildKube(m: NodeModules): string {
  const flags = versionFlags(m.kubeVersion);
  const output = binaries(m.kubeVersion).kube;
  return buildIfChanged(
    output,
    m.kubeDir,
    ['go.mod', 'go.sum', 'cmd/kube/main.go', ...standInFiles(m.kubeDir)],
    flags,
    () => {
      sh('go', ['build', '-trimpath', '-ldflags', flags, '-o', output, './cmd/kube'], {
        cwd: m.kubeDir,
        env: goEnvFor(m.kubeDir),
        stdio: ['ignore', 'pipe', 'pipe'],
      });
    },
  );
}

/** kubectl of the node's own version, for machines whose kubectl predates WebSocket exec and port-forward. */
export function buildKubectl(m: NodeModules, output: string): string {
  const flags = versionFlags(m.kubeVersion);
  return buildIfChanged(output, m.kubeDir, ['go.mod', 'go.sum'], flags, () => {
    // kubectl imports modules the node's binaries do not (kustomize, go-wordwrap, …), so the node's
    // go.sum lacks their sums ("missing go.sum entry"). Built from a copy of the node's module that
    // may add them (-mod=mod), so the node's own go.sum, and with it its build's cache, stay as they are.
    const dir = join(dirname(output), `kubectl-module-${m.kubeVersion}`);
    mkdirSync(dir, { recursive: true });
    for (const file of ['go.mod', 'go.sum']) copyFileSync(join(m.kubeDir, file), join(dir, file));
    sh('go', ['build', '-mod=mod', '-trimpath', '-ldflags', flags, '-o', output, 'k8s.io/kubernetes/cmd/kubectl'], {
      cwd: dir,
      env: goEnvFor(dir),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
  });
}

export function buildEtcd(m: NodeModules): string {
  const output = binaries(m.kubeVersion).etcd;
  return buildIfChanged(output, m.etcdDir, ['go.mod', 'go.sum'], m.etcdVersion, () => {
    sh('go', ['build', '-trimpath', '-o', output, 'go.etcd.io/etcd/server/v3'], {
      cwd: m.etcdDir,
      env: goEnvFor(m.etcdDir),
    });
  });
}

/** containerd, its runc shim and ctr, each skipped when its module and flags have not changed. */
export function buildContainerd(version = CONTAINERD_VERSION): string {
  const dir = containerdModule(version);
  const results = containerdBuilds(version).map((b) =>
    buildIfChanged(b.output, dir, ['go.mod', 'go.sum'], b.args.join(' '), () => {
      sh('go', b.args, {
        cwd: dir,
        env: { ...goEnvFor(dir), CGO_ENABLED: b.cgo ? '1' : '0' },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
    }),
  );
  return results.includes('built') ? 'built' : 'up to date';
}

export function buildPause(): string {
  return buildIfChanged(paths.pause, MODULE_DIR, ['cmd/pause/main.go'], 'static', () => {
    sh('go', ['build', '-trimpath', '-o', paths.pause, './cmd/pause'], {
      cwd: MODULE_DIR,
      env: { ...process.env, CGO_ENABLED: '0' },
    });
  });
}

/** Traefik, the node's edge: skipped when its version, stand-ins and flags have not changed. */
export function buildTraefik(version = TRAEFIK_VERSION): string {
  const dir = traefikModule(version);
  const output = traefikBinary(version);
  const args = traefikBuildArgs(output, version);
  const inputs = traefikStandIns().map((f) => join(STAND_INS_DIR, f));
  return buildIfChanged(output, '/', inputs, `${version} ${args.join(' ')}`, () => {
    sh('go', args, { cwd: dir, env: { ...goEnvFor(dir), CGO_ENABLED: '0' }, stdio: ['ignore', 'pipe', 'pipe'] });
  });
}

/** Every program one version's node runs, each step timed; cluster:up and cluster:build share it. */
export async function buildPrograms(kubeVersion: string): Promise<{ kube: string; seconds: number }> {
  const started = performance.now();
  const bin = binaries(kubeVersion);
  const modules = await step(`Go modules of ${kubeVersion}`, () => modulesFor(kubeVersion));
  const kube = await step(
    `build ${kubeVersion}: kube-apiserver, kube-controller-manager, kube-scheduler, kubelet, kube-proxy (one binary)`,
    () => buildKube(modules),
  );
  console.log(`  ${kube}: ${bin.kube}`);
  const etcd = await step(`build etcd ${modules.etcdVersion}`, () => buildEtcd(modules));
  console.log(`  ${etcd}: ${bin.etcd}`);
  console.log(`  ${await step('build pause', () => buildPause())}`);
  const containerd = await step(
    `build containerd ${CONTAINERD_VERSION}: containerd, containerd-shim-runc-v2, ctr`,
    () => buildContainerd(),
  );
  console.log(`  ${containerd}: ${containerdBinaries().dir}`);
  const seconds = (performance.now() - started) / 1000;
  // "built" only when the kube binary was built here; Go's caches may still have made parts of it warm.
  console.log(`build of ${kubeVersion}: ${kube === 'built' ? 'built' : 'cached'}`);
  console.log(`cluster_build_seconds: ${seconds.toFixed(1)}`);
  return { kube, seconds };
}
