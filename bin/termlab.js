#!/usr/bin/env node
// The published entry: load TypeScript through tsx so the CLI runs on Node 20 as on 22/24.
import { register } from 'tsx/esm/api';

// @kubernetes/client-node is some nine hundred modules. Loaded through tsx's hooks they cost 3.2 s of CPU,
// loaded by Node before the hooks 0.9 s (the harness's own imports then find them loaded): forty students
// starting at once on one machine feel the difference. Only the commands that need no cluster skip it.
const OFFLINE_COMMANDS = new Set(['grade', 'scenarios', 'schema', 'pack', 'predict']);
const command = process.argv[2];
if (command !== undefined && !command.startsWith('-') && !OFFLINE_COMMANDS.has(command)) await import('@kubernetes/client-node');

register();
await import('../harness/cli.ts');
