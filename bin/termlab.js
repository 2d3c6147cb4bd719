#!/usr/bin/env node
// The published entry. Node 22.18 and later strip the types themselves (process.features.typescript),
// though never in a file under node_modules (an installed termlab): there, and on older lines (Node 20),
// the CLI loads through tsx. Natively it starts in about half the CPU: the Kubernetes client alone is
// ~2,500 modules, and through tsx each is a round trip to the hooks' thread.
if (!process.features.typescript || import.meta.url.includes('/node_modules/')) {
  const { register } = await import('tsx/esm/api');
  register();
}
await import('../harness/cli.ts');
