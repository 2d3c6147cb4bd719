#!/usr/bin/env node
// The published entry: load TypeScript through tsx so the CLI runs on Node 20 as on 22/24.
import { register } from 'tsx/esm/api';

register();
await import('../harness/cli.ts');
