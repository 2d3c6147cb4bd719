// Entry of the lab server. In an image node runs this file as PID 1, so the signals reach it.
import { createLabServer } from './app.ts';
import { ConfigError, parseServerConfig, type ServerConfig } from './config.ts';
import { createEventLog } from './events.ts';

function start(): void {
  let config: ServerConfig;
  try {
    config = parseServerConfig(process.argv.slice(2), process.env);
  } catch (error) {
    const message = error instanceof ConfigError || error instanceof TypeError ? error.message : String(error);
    process.stderr.write(`lab-server: ${message}\n`);
    process.exit(2);
  }
  const logEvent = createEventLog({ podUid: config.podUid, podName: config.podName });
  const lab = createLabServer(config, logEvent, (code) => process.exit(code));
  for (const signal of ['SIGTERM', 'SIGINT'] as const) process.on(signal, () => lab.terminate(signal));
  lab.listen().catch((error: Error) => {
    process.stderr.write(`lab-server: cannot listen on ${config.host}:${config.port}: ${error.message}\n`);
    process.exit(2);
  });
}

start();
