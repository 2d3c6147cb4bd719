import { request, type Dispatcher } from 'undici';
import { spawnTs, type EventedProcess } from './processes.ts';

export interface LabProcess extends EventedProcess {
  port: number;
  base: string;
}

export async function startLabServer(
  mode: 'graceful' | 'immediate' | 'ignore-term',
  env: NodeJS.ProcessEnv = {},
): Promise<LabProcess> {
  const proc = spawnTs('server/main.ts', ['--port', '0', '--host', '127.0.0.1'], { LAB_MODE: mode, ...env });
  const listening = await proc.waitForEvent((e) => e.event === 'listening', 'listening');
  const port = listening.port as number;
  return { ...proc, port, base: `http://127.0.0.1:${port}` };
}

/** Reads an NDJSON body line by line; resolves with the lines seen and the error that cut it, if any. */
export async function readLines(
  body: Dispatcher.ResponseData['body'],
  onLine: (line: Record<string, unknown>) => void = () => {},
): Promise<{ lines: Record<string, unknown>[]; error: NodeJS.ErrnoException | null }> {
  const lines: Record<string, unknown>[] = [];
  let buffered = '';
  try {
    for await (const chunk of body) {
      buffered += chunk.toString();
      let newline: number;
      while ((newline = buffered.indexOf('\n')) >= 0) {
        const line = JSON.parse(buffered.slice(0, newline)) as Record<string, unknown>;
        buffered = buffered.slice(newline + 1);
        lines.push(line);
        onLine(line);
      }
    }
    return { lines, error: null };
  } catch (error) {
    return { lines, error: error as NodeJS.ErrnoException };
  }
}

export async function getJson(url: string, dispatcher?: Dispatcher) {
  const res = await request(url, { dispatcher });
  return { status: res.statusCode, headers: res.headers, body: (await res.body.json()) as Record<string, unknown> };
}

/** The lab server in proxy mode (LAB_MODE=proxy) in front of an app on 127.0.0.1:upstreamPort. */
export async function startProxy(
  upstreamPort: number,
  onTerm: 'exit' | 'drain',
  env: NodeJS.ProcessEnv = {},
): Promise<LabProcess> {
  const proc = spawnTs('server/main.ts', ['--port', '0', '--host', '127.0.0.1'], {
    LAB_MODE: 'proxy',
    PROXY_UPSTREAM_PORT: String(upstreamPort),
    PROXY_ON_TERM: onTerm,
    ...env,
  });
  const listening = await proc.waitForEvent((e) => e.event === 'listening', 'the proxy listening');
  const port = listening.port as number;
  return { ...proc, port, base: `http://127.0.0.1:${port}` };
}
