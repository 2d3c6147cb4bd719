// containerd v2 for the node, built from its Go module like etcd: a generated module under STATE/src that
// requires github.com/containerd/containerd/v2, and `go build` of the daemon, its runc shim and ctr.
// runc stays Debian's. Kubernetes 1.38's kubelet needs the CRI RuntimeConfig call, which 1.6 lacks.
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { paths, STATE } from './layout.ts';
import { sh } from './steps.ts';
import { goEnvFor } from './toolchain.ts';

export const CONTAINERD_VERSION = 'v2.4.2';
const MODULE = 'github.com/containerd/containerd/v2';

export function containerdBinaries(version = CONTAINERD_VERSION) {
  const dir = join(STATE, 'bin', `containerd-${version}`);
  return {
    dir,
    containerd: join(dir, 'containerd'),
    shim: join(dir, 'containerd-shim-runc-v2'),
    ctr: join(dir, 'ctr'),
  };
}

/** ctr of the built containerd; Debian's only where none is built (a node cluster:down finds from an older recipe). */
export function ctrCommand(): string {
  const ours = containerdBinaries().ctr;
  return existsSync(ours) ? ours : 'ctr';
}

/** The generated module that builds one containerd version (once; its marker is written last). */
export function containerdModule(version = CONTAINERD_VERSION): string {
  const dir = join(paths.src, `containerd-${version}`);
  if (!existsSync(join(dir, '.generated'))) {
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'go.mod'), 'module termlab.dev/dev/node/containerd\n\ngo 1.26.0\n');
    // The commands themselves, so go.sum holds every module their packages import.
    const commands = ['containerd', 'ctr', 'containerd-shim-runc-v2'].map((c) => `${MODULE}/cmd/${c}@${version}`);
    sh('go', ['get', ...commands], { cwd: dir, env: goEnvFor(dir) });
    writeFileSync(join(dir, '.generated'), version);
  }
  return dir;
}

/**
 * The flags of containerd's own Makefile: its version stamped, the CLI docs left out, no btrfs snapshotter
 * (it needs libbtrfs headers; the node uses overlayfs); the shim static, without cgo or gRPC.
 */
export function containerdBuilds(version = CONTAINERD_VERSION) {
  const bin = containerdBinaries(version);
  const stamp = ['Version', 'Revision', 'Package'].map(
    (v) => `-X ${MODULE}/version.${v}=${v === 'Package' ? MODULE : v === 'Version' ? version : `module-${version}`}`,
  );
  return [
    { output: bin.containerd, pkg: `${MODULE}/cmd/containerd`, tags: 'urfave_cli_no_docs no_btrfs', cgo: true },
    { output: bin.ctr, pkg: `${MODULE}/cmd/ctr`, tags: 'urfave_cli_no_docs no_btrfs', cgo: true },
    { output: bin.shim, pkg: `${MODULE}/cmd/containerd-shim-runc-v2`, tags: 'urfave_cli_no_docs no_grpc', cgo: false },
  ].map((b) => ({
    ...b,
    args: [
      'build',
      '-trimpath',
      '-tags',
      b.tags,
      '-ldflags',
      [...stamp, ...(b.cgo ? [] : ['-extldflags "-static"'])].join(' '),
      '-o',
      b.output,
      b.pkg,
    ],
  }));
}
