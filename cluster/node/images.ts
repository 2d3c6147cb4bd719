// Images without a registry: OCI layouts made with umoci, imported into containerd with ctr.
// The lab server image is this repository's server/, bundled to plain JavaScript for the host's
// Node.js runtime, which is copied in with the libraries it links.
import { chmodSync, copyFileSync, mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { build } from 'esbuild';
import { REPO, paths } from './layout.ts';
import { sh } from './steps.ts';

const TAG = '0.1.0';
/** What server/lab-hook.sh runs, and where the image has it. */
const HOOK_TOOLS = [['sh', '/bin/sh'], ['date', '/bin/date'], ['sleep', '/bin/sleep']] as const;

function ociImage(name: string, fill: (rootfs: string) => void, config: string[]): string {
  const layout = join(paths.images, name);
  rmSync(layout, { recursive: true, force: true });
  mkdirSync(paths.images, { recursive: true });
  sh('umoci', ['init', '--layout', layout]);
  sh('umoci', ['new', '--image', `${layout}:${TAG}`]);
  const bundle = join(mkdtempSync(join(tmpdir(), 'termlab-image-')), 'bundle');
  try {
    sh('umoci', ['unpack', '--image', `${layout}:${TAG}`, bundle]);
    fill(join(bundle, 'rootfs'));
    sh('umoci', ['repack', '--image', `${layout}:${TAG}`, bundle]);
  } finally {
    rmSync(dirname(bundle), { recursive: true, force: true });
  }
  sh('umoci', ['config', '--image', `${layout}:${TAG}`, ...config]);
  const archive = join(paths.images, `${name}.tar`);
  sh('tar', ['-C', layout, '-cf', archive, '.']);
  return archive;
}

function place(rootfs: string, from: string, to: string, mode?: number): void {
  const target = join(rootfs, to);
  mkdirSync(dirname(target), { recursive: true });
  copyFileSync(realpathSync(from), target);
  if (mode !== undefined) chmodSync(target, mode);
}

export function buildPauseImage(): string {
  return ociImage('pause', (rootfs) => place(rootfs, paths.pause, '/pause', 0o755), ['--config.entrypoint', '/pause']);
}

/** The shared libraries a binary links, from ldd. */
function linkedLibraries(binary: string): string[] {
  return sh('ldd', [binary]).split('\n').map((line) => /(\/\S+) \(0x/.exec(line.trim())?.[1]).filter((p): p is string => Boolean(p));
}

export async function buildLabImage(): Promise<string> {
  const staging = mkdtempSync(join(tmpdir(), 'termlab-lab-'));
  try {
    const common = { bundle: true, platform: 'node' as const, format: 'cjs' as const, target: 'node20', logLevel: 'error' as const };
    await build({ ...common, entryPoints: [join(REPO, 'server/main.ts')], outfile: join(staging, 'main.cjs') });
    return ociImage('lab-server', (rootfs) => {
      place(rootfs, process.execPath, '/usr/local/bin/node', 0o755);
      for (const library of linkedLibraries(process.execPath)) place(rootfs, library, library);
      place(rootfs, join(staging, 'main.cjs'), '/app/server/main.cjs', 0o644);
      // The exec hook is a POSIX shell script (start-up in milliseconds): the host's sh, date and sleep come with it.
      place(rootfs, join(REPO, 'server/lab-hook.sh'), '/usr/local/bin/lab-hook', 0o755);
      for (const [tool, path] of HOOK_TOOLS) {
        place(rootfs, sh('sh', ['-c', `command -v ${tool}`]).trim(), path, 0o755);
        for (const library of linkedLibraries(join(rootfs, path))) place(rootfs, library, library);
      }
      mkdirSync(join(rootfs, 'etc'), { recursive: true });
      writeFileSync(join(rootfs, 'etc/passwd'), 'root:x:0:0:root:/root:/sbin/nologin\nnode:x:1000:1000:node:/home/node:/sbin/nologin\n');
      writeFileSync(join(rootfs, 'etc/group'), 'root:x:0:\nnode:x:1000:\n');
      mkdirSync(join(rootfs, 'tmp'), { recursive: true });
      chmodSync(join(rootfs, 'tmp'), 0o1777);
    }, [
      '--config.entrypoint', '/usr/local/bin/node', '--config.entrypoint', '/app/server/main.cjs',
      '--config.user', '1000', '--config.workingdir', '/app',
      '--config.env', 'LAB_MODE=graceful', '--config.env', 'PORT=8080', '--config.env', 'HOST=0.0.0.0',
      '--config.exposedports', '8080/tcp', '--config.stopsignal', 'SIGTERM',
    ]);
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
}

export function importImage(archive: string, name: string): void {
  sh('ctr', ['--address', paths.containerdSocket, '-n', 'k8s.io', 'images', 'import', '--base-name', `docker.io/termlab/${name}`, archive]);
}
