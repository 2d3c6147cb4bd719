// The CLI bundled into plain JavaScript (dist/cli.mjs and its chunks), dependencies included: a spawn then
// parses a few files instead of resolving ~1,400 modules through a TypeScript loader (0.4 s of CPU for
// `run --help` against 1.5 s through tsx). Plain JavaScript itself, so that Node loads it with no loader.
// Split at the CLI's dynamic imports: a command loads its own code only (`termlab grade` never parses the
// Kubernetes client: 58 MB RSS for --version instead of 102, and a 10,000-file grade 172 MB instead of 233).
// Beside it, the lab server (server/main.ts) as one file, dist/lab-server.cjs: the program the simulated
// cluster's containers run in an installed package, which carries no TypeScript and no compiler; and the
// simulated edge (cluster/sim/edge/main.ts) as dist/sim-edge.cjs, which its traefik image runs; and the sim's
// service proxy's data path, dist/service-proxy-worker.cjs, the script of its worker thread.
// Only a checkout builds (npm's prepare and prepack, and bin/termlab.js after a source changed): esbuild is a
// devDependency, and the package is packed with what this writes.
import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { basename, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { debuglog } from 'node:util';

// NODE_DEBUG=termlab says on stderr which bundle a spawn runs and why it was built.
const debug = debuglog('termlab');

export const ROOT = fileURLToPath(new URL('..', import.meta.url));
export const BUNDLE = join(ROOT, 'dist', 'cli.mjs');
/** What the bundle was built from, relative to ROOT (its sources, one package.json per dependency), and its chunks. */
export const INPUTS = join(ROOT, 'dist', 'cli.inputs.json');
/** The lab server bundled: what the simulated cluster's containers run when the package has no sources. */
export const LAB_SERVER = join(ROOT, 'dist', 'lab-server.cjs');
/** The simulated cluster's edge (cluster/sim/edge/main.ts): what its traefik image runs when the package has no sources. */
export const SIM_EDGE = join(ROOT, 'dist', 'sim-edge.cjs');
/** The sim's service proxy's data path, a worker thread's script (cluster/sim/service-proxy-worker.ts). */
export const PROXY_WORKER = join(ROOT, 'dist', 'service-proxy-worker.cjs');
/** The bundle's chunks, named by their contents: a build never rewrites or removes one a running CLI may still import. */
const CHUNKS = join(ROOT, 'dist', 'chunks');
const CHUNKS_RELATIVE = 'dist/chunks/';
/** What a build writes, listed among its inputs: each needs only to be there (it was written after the build began). */
const OUTPUTS_RELATIVE = 'dist/';

// The bundle's CommonJS dependencies call require(); an ES module has none of its own.
const BANNER =
  "import { createRequire as __termlabCreateRequire } from 'node:module'; const require = __termlabCreateRequire(import.meta.url);";

/**
 * Why the bundle must be built (again), or null when it is newer than everything it was built from.
 * A dependency counts by its package.json, which an install rewrites: ~240 stats instead of ~1,400.
 */
export function staleReason() {
  const built = statSync(BUNDLE, { throwIfNoEntry: false });
  if (!built) return `${BUNDLE} is not built yet`;
  let inputs;
  try {
    inputs = JSON.parse(readFileSync(INPUTS, 'utf8'));
  } catch {
    return `${INPUTS} cannot be read`;
  }
  for (const input of inputs) {
    const source = statSync(join(ROOT, input), { throwIfNoEntry: false });
    if (!source) return `${input} is gone`;
    if (input.startsWith(OUTPUTS_RELATIVE)) continue;
    if (source.mtimeMs > built.mtimeMs) return `${input} changed`;
  }
  return null;
}

/** A metafile input as what to watch: a source as itself, a file of a dependency as its package.json. */
function watched(input) {
  const at = input.lastIndexOf('node_modules/');
  if (at === -1) return input;
  const rest = input.slice(at + 'node_modules/'.length).split('/');
  const name = rest[0].startsWith('@') ? rest.slice(0, 2) : rest.slice(0, 1);
  return `${input.slice(0, at)}node_modules/${name.join('/')}/package.json`;
}

/** esbuild, a devDependency: only a checkout builds. */
async function esbuild() {
  try {
    return await import('esbuild');
  } catch (error) {
    throw new Error(
      `esbuild cannot be loaded (a devDependency: a checkout installed without --omit=dev has it): ${error instanceof Error ? error.message : String(error)}`,
    );
  }
}

/** esbuild's options for a program as one CommonJS file with no dependencies (the lab server, the sim's edge, the proxy's worker). */
function oneFile(entry, outfile) {
  return {
    entryPoints: [join(ROOT, entry)],
    absWorkingDir: ROOT,
    outfile,
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    metafile: true,
    write: false,
    logLevel: 'silent',
  };
}

/**
 * Builds dist/cli.mjs from harness/cli/main.ts, and beside it the one-file programs (oneFile). Each build writes
 * its own temporary files and renames them into place, so spawns that find the bundle stale at once may each
 * build, and none reads half a file. The bundle's mtime is the build's start: a source saved while it builds
 * makes the next spawn build again. `prune` (an explicit build: npm's prepack and prepare) removes the chunks
 * this build did not write; a build a spawn starts removes none, as another CLI may be running the entry before it.
 */
export async function buildBundle({ prune = false } = {}) {
  const started = new Date();
  const { build } = await esbuild();
  const [cli, labServer, simEdge, proxyWorker] = await Promise.all([
    build({
      entryPoints: [join(ROOT, 'harness/cli/main.ts')],
      absWorkingDir: ROOT,
      outdir: join(ROOT, 'dist'),
      entryNames: 'cli',
      chunkNames: 'chunks/[name]-[hash]',
      outExtension: { '.js': '.mjs' },
      splitting: true,
      bundle: true,
      platform: 'node',
      format: 'esm',
      target: 'node20',
      // esbuild is not bundled: the sim of a checkout builds the lab server from its sources with it (an
      // installed package runs dist/lab-server.cjs and never loads it).
      // node-fetch (client-node's HTTP) calls url.parse() and, through tr46, the punycode module: Node 22+
      // warns on stderr for such calls outside node_modules, so it loads from there as its authors ship it
      // (the package's one runtime dependency).
      external: ['esbuild', 'node-fetch'],
      // Class and function names stay as written (errors and reports may show them).
      keepNames: true,
      banner: { js: BANNER },
      metafile: true,
      write: false,
      logLevel: 'silent',
    }),
    // Each one file with no dependencies, as the image has it: a container starts in about 0.1 s.
    build(oneFile('server/main.ts', LAB_SERVER)),
    build(oneFile('cluster/sim/edge/main.ts', SIM_EDGE)),
    build(oneFile('cluster/sim/service-proxy-worker.ts', PROXY_WORKER)),
  ]);
  mkdirSync(CHUNKS, { recursive: true });
  const suffix = `.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`;
  const entry = cli.outputFiles.find((f) => f.path === BUNDLE);
  const chunks = cli.outputFiles.filter((f) => f !== entry);
  const written = new Set(chunks.map((f) => basename(f.path)));
  const [server] = labServer.outputFiles;
  const [edge] = simEdge.outputFiles;
  const [worker] = proxyWorker.outputFiles;
  const sources = [
    ...Object.keys(cli.metafile.inputs),
    ...Object.keys(labServer.metafile.inputs),
    ...Object.keys(simEdge.metafile.inputs),
    ...Object.keys(proxyWorker.metafile.inputs),
  ].map(watched);
  // Each output is listed with the inputs, so that one gone missing makes the bundle stale.
  const inputs = [
    ...new Set([...sources, 'package.json', 'bin/cli-bundle.js']),
    ...[...written].map((name) => CHUNKS_RELATIVE + name),
    relative(ROOT, LAB_SERVER),
    relative(ROOT, SIM_EDGE),
    relative(ROOT, PROXY_WORKER),
  ].sort();
  try {
    // The chunks and the lab server first, then the inputs, then the entry that imports the chunks: a spawn
    // meanwhile runs the old entry and its chunks, or the new whole.
    for (const chunk of chunks) {
      if (existsSync(chunk.path)) continue;
      writeFileSync(chunk.path + suffix, chunk.contents);
      renameSync(chunk.path + suffix, chunk.path);
    }
    writeFileSync(LAB_SERVER + suffix, server.contents);
    renameSync(LAB_SERVER + suffix, LAB_SERVER);
    writeFileSync(SIM_EDGE + suffix, edge.contents);
    renameSync(SIM_EDGE + suffix, SIM_EDGE);
    writeFileSync(PROXY_WORKER + suffix, worker.contents);
    renameSync(PROXY_WORKER + suffix, PROXY_WORKER);
    writeFileSync(INPUTS + suffix, `${JSON.stringify(inputs, null, 1)}\n`);
    renameSync(INPUTS + suffix, INPUTS);
    writeFileSync(BUNDLE + suffix, entry.contents);
    utimesSync(BUNDLE + suffix, started, started);
    renameSync(BUNDLE + suffix, BUNDLE);
  } finally {
    rmSync(INPUTS + suffix, { force: true });
    rmSync(BUNDLE + suffix, { force: true });
    rmSync(LAB_SERVER + suffix, { force: true });
    rmSync(SIM_EDGE + suffix, { force: true });
    rmSync(PROXY_WORKER + suffix, { force: true });
    for (const chunk of chunks) rmSync(chunk.path + suffix, { force: true });
  }
  if (prune)
    for (const name of readdirSync(CHUNKS)) if (!written.has(name)) rmSync(join(CHUNKS, name), { force: true });
  return BUNDLE;
}

/** The bundle, built first when missing or stale (a checkout's: an installed package runs dist/cli.mjs as shipped). */
export async function freshBundle() {
  const stale = staleReason();
  if (!stale) {
    debug('running %s, up to date', BUNDLE);
    return BUNDLE;
  }
  debug('building %s: %s', BUNDLE, stale);
  return await buildBundle();
}

// `node bin/cli-bundle.js` (npm's prepack): build it now, whatever its state, and remove what this build did not
// write. `--if-stale` (npm's prepare, which npm pack also runs, after prepack): the same, only when it is stale.
if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const ifStale = process.argv.includes('--if-stale');
  const stale = ifStale ? staleReason() : 'asked to';
  if (stale) await buildBundle({ prune: true });
  debug(stale ? 'built %s: %s' : 'kept %s: up to date', BUNDLE, stale);
}
