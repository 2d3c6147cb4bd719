// server/Dockerfile's reaper target, built without a container engine: each of its stages' instructions done in a
// folder of its own (WORKDIR /app is that folder; COPY from the repository or an earlier stage; RUN in a shell
// there), then its ENTRYPOINT run. The image holds the bundle, its production dependencies and no TypeScript, and
// it reaches for a cluster (here one that refuses: the Kubernetes client and node-fetch load) as the CronJob runs it.
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Copy, type Instruction } from 'dockerfile-ast';
import { afterAll, describe, expect, it } from 'vitest';
import { EXIT } from '../../lib/errors.ts';
import { DOCKERFILE } from '../../server/dockerfile.ts';
import { repoRoot } from '../support/processes.ts';
import { type DockerfileStage, dockerfileStages } from './dockerfile-contract.ts';

const REAPER_STAGE = 'reaper';
const APP = '/app';
/** Two npm ci from the local cache and a build: a build step, not a check of speed. */
const BUILD_BUDGET_MS = 5 * 60_000;

const scratch = mkdtempSync(join(tmpdir(), 'termlab-reaper-stage-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const stages = dockerfileStages(readFileSync(DOCKERFILE, 'utf8'));
const stageNamed = (name: string) => stages.find((stage) => stage.from.getBuildStage() === name);
const words = (instruction: Instruction) => instruction.getArguments().map((argument) => argument.getValue());

/** The stages the target needs, in build order: those it copies from (COPY --from), then itself. */
function stagesOf(name: string): DockerfileStage[] {
  const stage = stageNamed(name);
  if (!stage) throw new Error(`server/Dockerfile has no stage ${name}`);
  const from = stage.instructions.flatMap((instruction) =>
    instruction instanceof Copy ? (instruction.getFromFlag()?.getValue() ?? []) : [],
  );
  return [...new Set(from)].flatMap(stagesOf).concat(stage);
}

interface Built {
  dir: string;
  entrypoint: string[];
}

/** One stage's instructions in its own folder; `built` holds the stages before it, by name. */
function build(stage: DockerfileStage, built: Map<string, Built>): Built {
  const dir = join(scratch, stage.from.getBuildStage() ?? 'stage');
  mkdirSync(dir);
  const local = (path: string, root: string) =>
    path.startsWith(`${APP}/`) ? join(root, path.slice(APP.length)) : path;
  let entrypoint: string[] = [];
  for (const instruction of stage.instructions) {
    const keyword = instruction.getKeyword();
    const args = words(instruction);
    if (keyword === 'WORKDIR') expect(args).toEqual([APP]);
    else if (keyword === 'USER') continue;
    else if (instruction instanceof Copy) {
      // Flags (--from, --chmod) are not among the arguments; --chmod changes nothing this test reads.
      const [destination, ...sources] = [...args].reverse();
      const fromStage = instruction.getFromFlag()?.getValue() ?? null;
      const root = fromStage === null ? repoRoot : built.get(fromStage)?.dir;
      if (!root || !destination) throw new Error(`COPY ${args.join(' ')}: no such stage or no destination`);
      const target = local(destination, dir);
      for (const source of sources.reverse()) {
        const from = fromStage === null ? join(root, source) : local(source, root);
        // As docker copies: a folder's contents into the destination, a file into a destination ending in /.
        const into =
          destination.endsWith('/') && !source.endsWith('/') ? join(target, source.split('/').pop()!) : target;
        cpSync(from, into, { recursive: true });
      }
    } else if (keyword === 'RUN') {
      // Each command of an `a && b` chain in turn, but the image's own cache cleanup: run on this host, it
      // would empty the user's npm cache (every later offline install here would fail).
      const commands = (instruction.getArgumentsContent() ?? '').replaceAll(APP, dir).split(' && ');
      for (const command of commands.filter((c) => !/^npm cache clean\b/.test(c.trim()))) {
        const run = spawnSync('sh', ['-c', command], {
          cwd: dir,
          encoding: 'utf8',
          timeout: BUILD_BUDGET_MS,
          // From the local npm cache when it holds every package, as the package test installs.
          env: { ...process.env, npm_config_prefer_offline: 'true', npm_config_update_notifier: 'false' },
        });
        if (run.status !== 0) throw new Error(`RUN ${command} exited ${run.status}:\n${run.stdout}\n${run.stderr}`);
      }
    } else if (keyword === 'ENTRYPOINT') entrypoint = JSON.parse(instruction.getArgumentsContent() ?? '[]');
    else throw new Error(`the reaper's stages use ${keyword}, which this test does not do as docker does`);
  }
  return { dir, entrypoint: entrypoint.map((word) => local(word, dir)) };
}

/** Every file under dir but node_modules, relative to it. */
function filesUnder(dir: string, prefix = ''): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    if (entry.name === 'node_modules') return [];
    const path = `${prefix}${entry.name}`;
    return entry.isDirectory() ? filesUnder(join(dir, entry.name), `${path}/`) : [path];
  });
}

describe("server/Dockerfile's reaper target", () => {
  it(
    'holds the bundle and its production dependencies, no TypeScript, and reaches for the cluster it is given',
    () => {
      const built = new Map<string, Built>();
      for (const stage of stagesOf(REAPER_STAGE)) built.set(stage.from.getBuildStage()!, build(stage, built));
      const reaper = built.get(REAPER_STAGE)!;

      const files = filesUnder(reaper.dir);
      expect(files).toEqual(expect.arrayContaining(['bin/termlab.js', 'dist/cli.mjs', 'package.json']));
      expect(files.filter((path) => path.endsWith('.ts'))).toEqual([]);
      for (const tool of ['esbuild', 'tsx', 'typescript'])
        expect(existsSync(join(reaper.dir, 'node_modules', tool)), tool).toBe(false);

      // The CronJob's arguments, against a cluster that refuses the connection: the reaper loads the client,
      // tries, and says so with the exit code of an unreachable cluster.
      const kubeconfig = join(scratch, 'kubeconfig');
      writeFileSync(
        kubeconfig,
        [
          'apiVersion: v1',
          'kind: Config',
          'clusters: [{ name: c, cluster: { server: "https://127.0.0.1:1", insecure-skip-tls-verify: true } }]',
          'users: [{ name: u, user: { token: t } }]',
          'contexts: [{ name: x, context: { cluster: c, user: u } }]',
          'current-context: x',
          '',
        ].join('\n'),
      );
      const [program, ...entryArgs] = reaper.entrypoint;
      expect(program).toBe('node');
      const args = ['reap', '--all-owners', '--namespace', 'termlab', '--env', 'termlab-class', '--kubeconfig'];
      const r = spawnSync(process.execPath, [...entryArgs, ...args, kubeconfig], { cwd: scratch, encoding: 'utf8' });
      expect(r.stderr).toMatch(/^termlab reap: cannot reach the cluster of context "x" at https:\/\/127\.0\.0\.1:1/);
      expect(r.status).toBe(EXIT.clusterUnreachable);
    },
    BUILD_BUDGET_MS,
  );
});
