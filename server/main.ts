// Entry of the lab server. In an image node runs this file as PID 1, so the signals reach it.
// LAB_MODE=load makes the same program the rollout lab's load generator (server/load.ts).
import { createLabServer } from './app.ts';
import { ConfigError, parseServerConfig, type ServerConfig } from './config.ts';
import { LAB_EXIT_CODES } from './contract.ts';
import { createEventLog } from './events.ts';
import { LoadConfigError, parseLoadConfig, runLoad } from './load.ts';

const CONFIG_EXIT = LAB_EXIT_CODES.config;

function fail(error: unknown): never {
  const message = error instanceof ConfigError || error instanceof LoadConfigError || error instanceof TypeError ? error.message : String(error);
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
  for (const signal of ['SIGTERM', 'SIGINT'] as const) process.on(signal, () => lab.terminate(signal));
  lab.listen().catch((error: Error) => {
    process.stderr.write(`lab-server: cannot listen on ${config.host}:${config.port}: ${error.message}\n`);
    process.exit(CONFIG_EXIT);
  });
}

if (process.env.LAB_MODE === 'load') startLoad();
else start();
