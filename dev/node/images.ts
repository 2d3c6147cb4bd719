// Images without a registry: OCI layouts made with umoci, imported into containerd with ctr.
// The lab server image follows the shared recipe (server/image.ts): its sources bundled to plain
// JavaScript for the host's Node.js runtime, which is copied in with the libraries it links.
import {
  chmodSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { build, type BuildOptions } from 'esbuild';
import { hookIsShellScript, LAB_IMAGE, pathInImage, type LabImageRecipe } from '../../server/image.ts';
import { REPO, paths } from './layout.ts';
import { sh } from './steps.ts';
import { ctrCommand } from './containerd.ts';

const TAG = LAB_IMAGE.tag;

function ociImage(name: string, fill: (rootfs: string) => void, config: string[], tag = TAG): string {
  const layout = join(paths.images, name);
  rmSync(layout, { recursive: true, force: true });
  mkdirSync(paths.images, { recursive: true });
  sh('umoci', ['init', '--layout', layout]);
  sh('umoci', ['new', '--image', `${layout}:${tag}`]);
  const bundle = join(mkdtempSync(join(tmpdir(), 'termlab-image-')), 'bundle');
  try {
    sh('umoci', ['unpack', '--image', `${layout}:${tag}`, bundle]);
    fill(join(bundle, 'rootfs'));
    sh('umoci', ['repack', '--image', `${layout}:${tag}`, bundle]);
  } finally {
    rmSync(dirname(bundle), { recursive: true, force: true });
  }
  sh('umoci', ['config', '--image', `${layout}:${tag}`, ...config]);
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
  return sh('ldd', [binary])
    .split('\n')
    .map((line) => /(\/\S+) \(0x/.exec(line.trim())?.[1])
    .filter((p): p is string => Boolean(p));
}

/** One program the node's lab image holds: a bundle of a TypeScript source, or a file copied as it is. */
export interface ImageProgram {
  source: string;
  target: string;
  mode: number;
  bundle: boolean;
}

export interface LabImagePlan {
  programs: ImageProgram[];
  /** Host programs copied in with the libraries they link (Node.js; /bin/sh for a shell hook). */
  hostPrograms: { from: string; to: string }[];
  config: {
    entrypoint: string[];
    user: string;
    workingDir: string;
    env: string[];
    exposedPorts: string[];
    stopSignal: string;
  };
}

const NODE_IN_IMAGE = '/usr/local/bin/node';
/** What server/lab-hook.sh runs: a shell, date and sleep (the Dockerfile's base image has them in busybox). */
const SHELL_HOOK_TOOLS = ['/bin/sh', '/bin/date', '/bin/sleep'];

/** What the node's lab image holds, from the shared recipe (server/image.ts): no contents of its own. */
export function labImagePlan(recipe: LabImageRecipe = LAB_IMAGE): LabImagePlan {
  // The host's Node.js may be older than the Dockerfile's (no type stripping), so the sources are bundled to CommonJS.
  const entryTarget = pathInImage(recipe, recipe.entryPoint).replace(/\.ts$/, '.cjs');
  const hook: ImageProgram = {
    source: recipe.hookProgram,
    target: recipe.hookPath,
    mode: 0o755,
    bundle: !hookIsShellScript(recipe),
  };
  return {
    programs: [{ source: recipe.entryPoint, target: entryTarget, mode: 0o644, bundle: true }, hook],
    hostPrograms: [
      { from: process.execPath, to: NODE_IN_IMAGE },
      ...(hookIsShellScript(recipe) ? SHELL_HOOK_TOOLS.map((tool) => ({ from: tool, to: tool })) : []),
    ],
    config: {
      entrypoint: [NODE_IN_IMAGE, entryTarget],
      user: String(recipe.user),
      workingDir: recipe.appDir,
      env: Object.entries(recipe.env).map(([name, value]) => `${name}=${value}`),
      exposedPorts: [`${recipe.port}/tcp`],
      stopSignal: recipe.stopSignal,
    },
  };
}

export function umociConfigArgs(config: LabImagePlan['config']): string[] {
  return [
    ...config.entrypoint.flatMap((part) => ['--config.entrypoint', part]),
    '--config.user',
    config.user,
    '--config.workingdir',
    config.workingDir,
    ...config.env.flatMap((pair) => ['--config.env', pair]),
    ...config.exposedPorts.flatMap((port) => ['--config.exposedports', port]),
    '--config.stopsignal',
    config.stopSignal,
  ];
}

function isExecutable(program: ImageProgram): boolean {
  return (program.mode & 0o111) !== 0;
}

/** esbuild options for one bundled program; the test reads the same options to list a bundle's sources. */
export function bundleOptions(program: ImageProgram, outfile: string): BuildOptions {
  return {
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    logLevel: 'error',
    entryPoints: [join(REPO, program.source)],
    outfile,
    ...(isExecutable(program) ? { banner: { js: `#!${NODE_IN_IMAGE}` } } : {}),
  };
}

export async function buildLabImage(plan: LabImagePlan = labImagePlan()): Promise<string> {
  const staging = mkdtempSync(join(tmpdir(), 'termlab-lab-'));
  try {
    const staged = await Promise.all(
      plan.programs.map(async (program, index) => {
        if (!program.bundle) return { program, file: join(REPO, program.source) };
        const file = join(staging, String(index));
        await build(bundleOptions(program, file));
        return { program, file };
      }),
    );
    return ociImage(
      'lab-server',
      (rootfs) => {
        for (const { from, to } of plan.hostPrograms) {
          place(rootfs, from, to, 0o755);
          for (const library of linkedLibraries(from)) place(rootfs, library, library);
        }
        for (const { program, file } of staged) place(rootfs, file, program.target, program.mode);
        mkdirSync(join(rootfs, 'etc'), { recursive: true });
        const user = plan.config.user;
        writeFileSync(
          join(rootfs, 'etc/passwd'),
          `root:x:0:0:root:/root:/sbin/nologin\nnode:x:${user}:${user}:node:/home/node:/sbin/nologin\n`,
        );
        writeFileSync(join(rootfs, 'etc/group'), `root:x:0:\nnode:x:${user}:\n`);
        mkdirSync(join(rootfs, 'tmp'), { recursive: true });
        chmodSync(join(rootfs, 'tmp'), 0o1777);
      },
      umociConfigArgs(plan.config),
    );
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
}

/**
 * Traefik's image under its Docker Hub name, so manifests/edge/traefik.yaml runs unchanged here and on kind:
 * the binary alone (static, CGO_ENABLED=0), run as root as the official image does. Made again only when
 * the binary changed.
 */
export function buildTraefikImage(binary: string, reference: string): { archive: string; built: boolean } {
  const [base = reference, tag = 'latest'] = reference.split(/:(?=[^:/]+$)/);
  const name = base.split('/').pop() ?? base;
  const archive = join(paths.images, `${name}.tar`);
  const stamp = `${archive}.inputs`;
  const { size, mtimeMs } = statSync(binary);
  const wanted = `${reference} ${size} ${mtimeMs}`;
  if (existsSync(archive) && existsSync(stamp) && readFileSync(stamp, 'utf8') === wanted)
    return { archive, built: false };
  ociImage(
    name,
    (rootfs) => {
      place(rootfs, binary, TRAEFIK_IN_IMAGE, 0o755);
      mkdirSync(join(rootfs, 'tmp'), { recursive: true });
      chmodSync(join(rootfs, 'tmp'), 0o1777);
    },
    ['--config.entrypoint', TRAEFIK_IN_IMAGE, '--config.exposedports', '80/tcp', '--config.stopsignal', 'SIGTERM'],
    tag,
  );
  writeFileSync(stamp, wanted);
  return { archive, built: true };
}

const TRAEFIK_IN_IMAGE = '/usr/local/bin/traefik';

/** Imports an OCI archive into the kubelet's namespace as <baseName>:<its tag> (default docker.io/termlab/<name>). */
export function importImage(archive: string, name: string, baseName = `docker.io/termlab/${name}`): void {
  sh(ctrCommand(), [
    '--address',
    paths.containerdSocket,
    '-n',
    'k8s.io',
    'images',
    'import',
    '--base-name',
    baseName,
    archive,
  ]);
}
