// Entry of the lab server. In an image node runs this file as PID 1, so the signals reach it.
// LAB_MODE=load makes the same program the rollout lab's load generator (server/load.ts), and
// LAB_MODE=proxy a sidecar proxy in front of the app container (server/proxy.ts), and LAB_MODE=ledger
// the retries lab's ledger (server/ledger.ts), and LAB_MODE=witness the class's witness (server/witness.ts).
import { createLabServer } from './app.ts';
import {
  ConfigError,
  type LedgerConfig,
  parseLedgerConfig,
  parseProxyConfig,
  parseServerConfig,
  type ProxyConfig,
  type ServerConfig,
} from './config.ts';
import {
  LAB_EXIT_CODES,
  LAB_LEDGER_MODE,
  LAB_LOAD_MODE,
  LAB_MODE_ENV,
  LAB_PROXY_MODE,
  LAB_WITNESS_MODE,
} from './contract.ts';
import { createEventLog, createLedgerEventLog, createProxyEventLog } from './events.ts';
import { createLedger } from './ledger.ts';
import { LoadConfigError, parseLoadConfig, runLoad } from './load.ts';
import { createProxy } from './proxy.ts';
import { parseWitnessConfig, runWitness, WitnessConfigError } from './witness.ts';

const CONFIG_EXIT = LAB_EXIT_CODES.config;

function fail(error: unknown): never {
  const message =
    error instanceof ConfigError ||
    error instanceof LoadConfigError ||
    error instanceof WitnessConfigError ||
    error instanceof TypeError
      ? error.message
      : String(error);
  process.stderr.write(`lab-server: ${message}\n`);
  process.exit(CONFIG_EXIT);
}

function startLoad(): void {
  let load: ReturnType<typeof runLoad>;
  try {
    load = runLoad(parseLoadConfig(process.env));
  } catch (error) {
    fail(error);
  }
  // A deleted load pod stops sending; what is in flight still ends and is recorded.
  for (const signal of ['SIGTERM', 'SIGINT'] as const) process.on(signal, () => load.stop());
  load.done.then(() => process.exit(0));
}

function start(): void {
  let config: ServerConfig;
  try {
    config = parseServerConfig(process.argv.slice(2), process.env);
  } catch (error) {
    fail(error);
  }
  const logEvent = createEventLog({ podUid: config.podUid, podName: config.podName });
  const lab = createLabServer(config, logEvent, (code) => process.exit(code));
  // The drain signal too, when it is another: without a handler SIGQUIT would end node at once.
  for (const signal of new Set(['SIGTERM', 'SIGINT', config.drainSignal] as const))
    process.on(signal, () => lab.terminate(signal));
  lab.listen().catch((error: Error) => {
    process.stderr.write(`lab-server: cannot listen on ${config.host}:${config.port}: ${error.message}\n`);
    process.exit(CONFIG_EXIT);
  });
}

function startProxy(): void {
  let config: ProxyConfig;
  try {
    config = parseProxyConfig(process.argv.slice(2), process.env);
  } catch (error) {
    fail(error);
  }
  const logEvent = createProxyEventLog({ podUid: config.podUid, podName: config.podName });
  const proxy = createProxy(config, logEvent, (code) => process.exit(code));
  for (const signal of ['SIGTERM', 'SIGINT'] as const) process.on(signal, () => proxy.terminate(signal));
  proxy.listen().catch((error: Error) => {
    process.stderr.write(`lab-server: proxy cannot listen on ${config.host}:${config.port}: ${error.message}\n`);
    process.exit(CONFIG_EXIT);
  });
}

function startLedger(): void {
  let config: LedgerConfig;
  try {
    config = parseLedgerConfig(process.argv.slice(2), process.env);
  } catch (error) {
    fail(error);
  }
  const ledger = createLedger(
    config,
    createLedgerEventLog({ podUid: config.podUid, podName: config.podName }),
    (code) => process.exit(code),
  );
  for (const signal of ['SIGTERM', 'SIGINT'] as const) process.on(signal, () => ledger.terminate(signal));
  ledger.listen().catch((error: Error) => {
    process.stderr.write(`lab-server: ledger cannot listen on ${config.host}:${config.port}: ${error.message}\n`);
    process.exit(CONFIG_EXIT);
  });
}

function startWitness(): void {
  let witness: ReturnType<typeof runWitness>;
  try {
    witness = runWitness(parseWitnessConfig(process.env));
  } catch (error) {
    fail(error);
  }
  // Every record is in the API as soon as it is written: a stop loses nothing.
  for (const signal of ['SIGTERM', 'SIGINT'] as const) process.on(signal, () => witness.stop());
  witness.done.then(() => process.exit(0));
}

const mode = process.env[LAB_MODE_ENV];
if (mode === LAB_LOAD_MODE) startLoad();
else if (mode === LAB_PROXY_MODE) startProxy();
else if (mode === LAB_LEDGER_MODE) startLedger();
else if (mode === LAB_WITNESS_MODE) startWitness();
else start();
