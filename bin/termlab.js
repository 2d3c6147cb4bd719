#!/usr/bin/env node
// The published entry: runs the CLI bundled into plain JavaScript (dist/cli.mjs). An installed package carries
// the bundle built when it was packed and no sources: it runs it as it is, and builds nothing. A checkout (its
// TypeScript sources beside this file) builds the bundle first when a source changed (cli-bundle.js); should
// that build fail, the CLI runs from its TypeScript sources as before, slower.
import { existsSync } from 'node:fs';
import nodeModule from 'node:module';
import { pathToFileURL } from 'node:url';

const SOURCE = new URL('../harness/cli/main.ts', import.meta.url);
const SHIPPED = new URL('../dist/cli.mjs', import.meta.url);

let bundle = null;
if (!existsSync(SOURCE)) {
  bundle = SHIPPED;
  // TERMLAB_BUNDLE=0 runs the sources, as a fallback does (bench:cli compares the two).
} else if (process.env.TERMLAB_BUNDLE !== '0') {
  try {
    const { freshBundle } = await import('./cli-bundle.js');
    bundle = pathToFileURL(await freshBundle());
  } catch (error) {
    process.stderr.write(
      `termlab: running from the TypeScript sources (slower): the bundle could not be built: ${error instanceof Error ? error.message : String(error)}\n`,
    );
  }
}
if (bundle) {
  // Node 22.1+ keeps V8's compiled code of the bundle's files on disk (NODE_COMPILE_CACHE or the temp folder,
  // checked against the file's contents): a spawn then skips ~0.2 s of compiling. Node 20 has no such cache.
  nodeModule.enableCompileCache?.();
  await import(bundle.href);
} else {
  // From source (a checkout, its devDependencies installed): Node 22.18 and later strip the types themselves
  // (process.features.typescript), though never in a file under node_modules; there, and on Node 20, through tsx.
  if (!process.features.typescript || import.meta.url.includes('/node_modules/')) {
    // Through tsx, the Kubernetes client is loaded by Node before tsx registers its hooks (3.2 s of CPU
    // through them, 0.9 s without; the harness's own imports then find it loaded). Only the commands that
    // need no cluster skip it.
    const OFFLINE_COMMANDS = new Set(['grade', 'scenarios', 'schema', 'pack', 'predict', 'version']);
    const command = process.argv[2];
    if (command !== undefined && !command.startsWith('-') && !OFFLINE_COMMANDS.has(command))
      await import('@kubernetes/client-node');
    const { register } = await import('tsx/esm/api');
    register();
  }
  await import(SOURCE.href);
}
