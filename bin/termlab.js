#!/usr/bin/env node
// The published entry: runs the CLI bundled into plain JavaScript (cli-bundle.js), built here first when a
// source changed. Should the build fail, the CLI runs from its TypeScript sources as before, slower.
import nodeModule from 'node:module';
import { freshBundle } from './cli-bundle.js';

let bundle = null;
// TERMLAB_BUNDLE=0 runs the sources, as a fallback does (bench:cli compares the two).
if (process.env.TERMLAB_BUNDLE !== '0') {
  try {
    bundle = await freshBundle();
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
  await import(new URL(`file://${bundle}`).href);
} else {
  // From source: Node 22.18 and later strip the types themselves (process.features.typescript), though
  // never in a file under node_modules (an installed termlab); there, and on Node 20, through tsx.
  if (!process.features.typescript || import.meta.url.includes('/node_modules/')) {
    // Through tsx, the Kubernetes client is loaded by Node before tsx registers its hooks (3.2 s of CPU
    // through them, 0.9 s without; the harness's own imports then find it loaded). Only the commands that
    // need no cluster skip it.
    const OFFLINE_COMMANDS = new Set(['grade', 'scenarios', 'schema', 'pack', 'predict']);
    const command = process.argv[2];
    if (command !== undefined && !command.startsWith('-') && !OFFLINE_COMMANDS.has(command))
      await import('@kubernetes/client-node');
    const { register } = await import('tsx/esm/api');
    register();
  }
  await import('../harness/cli/main.ts');
}
