#!/usr/bin/env node
// The published entry. Node 22.18 and later strip the types themselves (process.features.typescript):
// the CLI then loads without tsx's hooks, in about half the CPU (the Kubernetes client alone is ~2,500
// modules, each a round trip through the hooks' thread). Older lines, Node 20 among them, load it through tsx.
if (!process.features.typescript) {
  const { register } = await import('tsx/esm/api');
  register();
}
await import('../harness/cli.ts');
