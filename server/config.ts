// The server stays free of npm dependencies so its image is node and these files alone;
// its inputs are four settings, checked here with messages that name each one.
import { parseArgs } from 'node:util';
import { LAB_MODE_ENV, LAB_MODES, LAB_TERM_ALLOCATE_ENV, type LabMode } from './contract.ts';

export type { LabMode };

export interface ServerConfig {
  mode: LabMode;
  port: number;
  host: string;
  podUid?: string;
  podName?: string;
  /** MiB to allocate (and touch) on the termination signal: a shutdown that runs out of memory. */
  termAllocateMiB: number;
}

export class ConfigError extends Error {
  readonly code = 'LAB_CONFIG_INVALID';
}

const MODES: readonly string[] = LAB_MODES;
const ALLOCATE_MIB_MAX = 65536;

export function parseServerConfig(argv: string[], env: NodeJS.ProcessEnv): ServerConfig {
  const { values } = parseArgs({
    args: argv,
    strict: true,
    options: {
      mode: { type: 'string' },
      port: { type: 'string' },
      host: { type: 'string' },
      'pod-uid': { type: 'string' },
      'pod-name': { type: 'string' },
    },
  });
  const mode = values.mode ?? env[LAB_MODE_ENV] ?? 'graceful';
  if (!MODES.includes(mode)) {
    throw new ConfigError(`${LAB_MODE_ENV}/--mode: expected graceful, immediate, ignore-term or load (the load generator), got ${JSON.stringify(mode)}`);
  }
  const portText = values.port ?? env.PORT ?? '8080';
  const port = Number(portText);
  if (!/^\d+$/.test(portText) || port > 65535) {
    throw new ConfigError(`PORT/--port: expected an integer 0-65535, got ${JSON.stringify(portText)}`);
  }
  const host = values.host ?? env.HOST ?? '0.0.0.0';
  if (host.length === 0) throw new ConfigError('HOST/--host: must not be empty');
  const allocateText = env[LAB_TERM_ALLOCATE_ENV] || '0';
  const termAllocateMiB = Number(allocateText);
  if (!/^\d+$/.test(allocateText) || termAllocateMiB > ALLOCATE_MIB_MAX) {
    throw new ConfigError(`${LAB_TERM_ALLOCATE_ENV}: expected an integer 0-${ALLOCATE_MIB_MAX}, got ${JSON.stringify(allocateText)}`);
  }
  return {
    mode: mode as LabMode,
    port,
    host,
    podUid: values['pod-uid'] ?? (env.POD_UID || undefined),
    podName: values['pod-name'] ?? (env.POD_NAME || undefined),
    termAllocateMiB,
  };
}
