// The server stays free of npm dependencies so its image is node and these files alone;
// its inputs are a few settings (the app's, then the proxy's), checked here with messages that name each one.
import { parseArgs } from 'node:util';
import {
  type EffectPoint,
  LAB_EFFECT_ENV,
  LAB_DRAIN_SIGNAL_ENV,
  LAB_DRAIN_SIGNALS,
  LAB_EFFECT_POINTS,
  LAB_KEEPALIVE_ENV,
  LAB_KEEPALIVE_TIMEOUT_ENV,
  LAB_KEEPALIVE_VARIANTS,
  LAB_LEDGER_URL_ENV,
  LAB_MODE_ENV,
  LAB_MODES,
  LAB_TERM_ALLOCATE_ENV,
  type LabDrainSignal,
  type LabKeepAlive,
  type LabMode,
  PROXY_ON_TERM_ENV,
  PROXY_ON_TERM_MODES,
  PROXY_UPSTREAM_PORT_ENV,
  type ProxyOnTerm,
} from './contract.ts';

export type { LabMode };

export interface ServerConfig {
  mode: LabMode;
  port: number;
  host: string;
  podUid?: string;
  podName?: string;
  /** The signal it drains on (SIGTERM by default); with another, TERM and INT stop a graceful server at once. */
  drainSignal: LabDrainSignal;
  /** MiB to allocate (and touch) on the termination signal: a shutdown that runs out of memory. */
  termAllocateMiB: number;
  /** Where the work calls the ledger (the retries lab), and the ledger's base URL; none: no effect. */
  effect: { point: Exclude<EffectPoint, 'none'>; ledgerUrl: string } | null;
  /** LAB_KEEPALIVE: what TERM does to kept-alive sockets; null: today's drain (as naive). */
  keepAlive: LabKeepAlive | null;
  /** LAB_KEEPALIVE_TIMEOUT_MS: the app's idle keep-alive timeout; null: Node's default (5000). */
  keepAliveTimeoutMs: number | null;
}

export class ConfigError extends Error {
  readonly code = 'LAB_CONFIG_INVALID';
}

const MODES: readonly string[] = LAB_MODES;
const DRAIN_SIGNALS: readonly string[] = LAB_DRAIN_SIGNALS;
const ALLOCATE_MIB_MAX = 65536;
const KEEPALIVE_VARIANTS: readonly string[] = LAB_KEEPALIVE_VARIANTS;
/** 0 (Node: never time out) is refused: a polite app would then wait for its idle sockets forever. */
const KEEPALIVE_TIMEOUT_MAX_MS = 600_000;

function parseFlags(argv: string[]) {
  const { values } = parseArgs({
    args: argv,
    strict: true,
    options: {
      mode: { type: 'string' },
      port: { type: 'string' },
      host: { type: 'string' },
      'pod-uid': { type: 'string' },
      'pod-name': { type: 'string' },
      'drain-signal': { type: 'string' },
    },
  });
  return values;
}

function listenPort(text: string, name: string): number {
  const port = Number(text);
  if (!/^\d+$/.test(text) || port > 65535)
    throw new ConfigError(`${name}: expected an integer 0-65535, got ${JSON.stringify(text)}`);
  return port;
}

export function parseServerConfig(argv: string[], env: NodeJS.ProcessEnv): ServerConfig {
  const values = parseFlags(argv);
  const mode = values.mode ?? env[LAB_MODE_ENV] ?? 'graceful';
  if (!MODES.includes(mode)) {
    throw new ConfigError(
      `${LAB_MODE_ENV}/--mode: expected graceful, immediate, ignore-term, load (the load generator), proxy (the sidecar proxy), ledger (the retries lab's ledger) or witness (the class's witness), got ${JSON.stringify(mode)}`,
    );
  }
  const port = listenPort(values.port ?? env.PORT ?? '8080', 'PORT/--port');
  const host = values.host ?? env.HOST ?? '0.0.0.0';
  if (host.length === 0) throw new ConfigError('HOST/--host: must not be empty');
  const allocateText = env[LAB_TERM_ALLOCATE_ENV] || '0';
  const termAllocateMiB = Number(allocateText);
  if (!/^\d+$/.test(allocateText) || termAllocateMiB > ALLOCATE_MIB_MAX) {
    throw new ConfigError(
      `${LAB_TERM_ALLOCATE_ENV}: expected an integer 0-${ALLOCATE_MIB_MAX}, got ${JSON.stringify(allocateText)}`,
    );
  }
  const drainSignal = values['drain-signal'] ?? env[LAB_DRAIN_SIGNAL_ENV] ?? 'SIGTERM';
  if (!DRAIN_SIGNALS.includes(drainSignal)) {
    throw new ConfigError(
      `${LAB_DRAIN_SIGNAL_ENV}/--drain-signal: expected one of ${LAB_DRAIN_SIGNALS.join(', ')}, got ${JSON.stringify(drainSignal)}`,
    );
  }
  return {
    mode: mode as LabMode,
    port,
    host,
    drainSignal: drainSignal as LabDrainSignal,
    podUid: values['pod-uid'] ?? (env.POD_UID || undefined),
    podName: values['pod-name'] ?? (env.POD_NAME || undefined),
    termAllocateMiB,
    effect: parseEffect(env),
    ...parseKeepAlive(env),
  };
}

/** LAB_KEEPALIVE and LAB_KEEPALIVE_TIMEOUT_MS; unset or empty: today's behaviour. */
function parseKeepAlive(env: NodeJS.ProcessEnv): Pick<ServerConfig, 'keepAlive' | 'keepAliveTimeoutMs'> {
  const variant = env[LAB_KEEPALIVE_ENV] || null;
  if (variant !== null && !KEEPALIVE_VARIANTS.includes(variant))
    throw new ConfigError(
      `${LAB_KEEPALIVE_ENV}: expected ${LAB_KEEPALIVE_VARIANTS.join(' or ')} (or unset), got ${JSON.stringify(variant)}`,
    );
  const text = env[LAB_KEEPALIVE_TIMEOUT_ENV] || null;
  if (text !== null && (!/^\d+$/.test(text) || Number(text) < 1 || Number(text) > KEEPALIVE_TIMEOUT_MAX_MS))
    throw new ConfigError(
      `${LAB_KEEPALIVE_TIMEOUT_ENV}: expected the app's idle keep-alive timeout in ms, an integer 1-${KEEPALIVE_TIMEOUT_MAX_MS}, got ${JSON.stringify(text)}`,
    );
  return { keepAlive: variant as LabKeepAlive | null, keepAliveTimeoutMs: text === null ? null : Number(text) };
}

const EFFECT_POINTS: readonly string[] = LAB_EFFECT_POINTS;

/** LAB_EFFECT and LAB_LEDGER_URL: an effect needs a ledger to call, and a ledger URL an effect. */
function parseEffect(env: NodeJS.ProcessEnv): ServerConfig['effect'] {
  const point = env[LAB_EFFECT_ENV] || 'none';
  if (!EFFECT_POINTS.includes(point))
    throw new ConfigError(`${LAB_EFFECT_ENV}: expected start, end or none, got ${JSON.stringify(point)}`);
  const url = env[LAB_LEDGER_URL_ENV] || '';
  if (point === 'none') return null;
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new ConfigError(
      `${LAB_LEDGER_URL_ENV}: ${LAB_EFFECT_ENV}=${point} needs the ledger's http:// base URL, got ${JSON.stringify(url)}`,
    );
  }
  if (parsed.protocol !== 'http:')
    throw new ConfigError(`${LAB_LEDGER_URL_ENV}: expected an http:// URL, got ${JSON.stringify(url)}`);
  return { point: point as 'start' | 'end', ledgerUrl: url.replace(/\/+$/, '') };
}

/** LAB_MODE=ledger: where it listens. */
export interface LedgerConfig {
  port: number;
  host: string;
  podUid?: string;
  podName?: string;
}

export function parseLedgerConfig(argv: string[], env: NodeJS.ProcessEnv): LedgerConfig {
  const values = parseFlags(argv);
  if (values.mode !== undefined && values.mode !== 'ledger')
    throw new ConfigError(`--mode: ${JSON.stringify(values.mode)} contradicts ${LAB_MODE_ENV}=ledger`);
  const port = listenPort(values.port ?? env.PORT ?? '8080', 'PORT/--port');
  const host = values.host ?? env.HOST ?? '0.0.0.0';
  if (host.length === 0) throw new ConfigError('HOST/--host: must not be empty');
  return {
    port,
    host,
    podUid: values['pod-uid'] ?? (env.POD_UID || undefined),
    podName: values['pod-name'] ?? (env.POD_NAME || undefined),
  };
}

/** LAB_MODE=proxy: where it listens, the app's port on localhost, and what it does on TERM. */
export interface ProxyConfig {
  port: number;
  host: string;
  upstreamPort: number;
  onTerm: ProxyOnTerm;
  podUid?: string;
  podName?: string;
}

const ON_TERM: readonly string[] = PROXY_ON_TERM_MODES;

export function parseProxyConfig(argv: string[], env: NodeJS.ProcessEnv): ProxyConfig {
  const values = parseFlags(argv);
  if (values.mode !== undefined && values.mode !== 'proxy')
    throw new ConfigError(`--mode: ${JSON.stringify(values.mode)} contradicts ${LAB_MODE_ENV}=proxy`);
  const port = listenPort(values.port ?? env.PORT ?? '8080', 'PORT/--port');
  const host = values.host ?? env.HOST ?? '0.0.0.0';
  if (host.length === 0) throw new ConfigError('HOST/--host: must not be empty');
  const upstreamText = env[PROXY_UPSTREAM_PORT_ENV] ?? '';
  const upstreamPort = Number(upstreamText);
  if (!/^\d+$/.test(upstreamText) || upstreamPort < 1 || upstreamPort > 65535) {
    throw new ConfigError(
      `${PROXY_UPSTREAM_PORT_ENV}: expected the app container's port, an integer 1-65535, got ${JSON.stringify(env[PROXY_UPSTREAM_PORT_ENV] ?? null)}`,
    );
  }
  if (upstreamPort === port)
    throw new ConfigError(
      `${PROXY_UPSTREAM_PORT_ENV}: ${upstreamPort} is the proxy's own PORT; the app container listens on another`,
    );
  // Exit is what many proxies do by default, and what this setting defaults to.
  const onTerm = env[PROXY_ON_TERM_ENV] || 'exit';
  if (!ON_TERM.includes(onTerm))
    throw new ConfigError(`${PROXY_ON_TERM_ENV}: expected exit or drain, got ${JSON.stringify(onTerm)}`);
  return {
    port,
    host,
    upstreamPort,
    onTerm: onTerm as ProxyOnTerm,
    podUid: values['pod-uid'] ?? (env.POD_UID || undefined),
    podName: values['pod-name'] ?? (env.POD_NAME || undefined),
  };
}
