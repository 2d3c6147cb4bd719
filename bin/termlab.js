#!/usr/bin/env node
// The published entry. Node 22.18 and later strip the types themselves (process.features.typescript),
// though never in a file under node_modules (an installed termlab): there, and on older lines (Node 20),
// the CLI loads through tsx. Natively it starts in about half the CPU: the Kubernetes client alone is
// ~2,500 modules, and through tsx each is a round trip to the hooks' thread.
if (!process.features.typescript || import.meta.url.includes('/node_modules/')) {
  // Through tsx, the Kubernetes client is loaded by Node before tsx registers its hooks (3.2 s of CPU through
  // them, 0.9 s without; the harness's own imports then find it loaded): forty students starting at once on
  // one machine feel the difference. Only the commands that need no cluster skip it.
  const OFFLINE_COMMANDS = new Set(['grade', 'scenarios', 'schema', 'pack', 'predict']);
  const command = process.argv[2];
  if (command !== undefined && !command.startsWith('-') && !OFFLINE_COMMANDS.has(command)) await import('@kubernetes/client-node');
  const { register } = await import('tsx/esm/api');
  register();
}
await import('../harness/cli.ts');
