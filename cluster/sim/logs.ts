// pods/log: the container's lines, with the kubelet's RFC 3339 nano prefix when asked; with
// follow the stream stays open and ends when the container exits.
import type { ServerResponse } from 'node:http';
import type { ContainerProcess, LogLine } from './runtime.ts';
import { logTimestamp } from './time.ts';

export interface LogOptions {
  follow: boolean;
  timestamps: boolean;
  sinceTime: string | null;
  tailLines: number | null;
}

export function serveLog(res: ServerResponse, container: ContainerProcess, options: LogOptions): void {
  const since = options.sinceTime ? Date.parse(options.sinceTime) : null;
  const format = (line: LogLine) => `${options.timestamps ? `${logTimestamp(line.wallMs)} ` : ''}${line.text}\n`;
  res.writeHead(200, { 'content-type': 'text/plain', 'cache-control': 'no-cache, private' });
  res.flushHeaders();
  let lines = container.lines.filter((l) => since === null || l.wallMs >= since);
  if (options.tailLines !== null) lines = lines.slice(-options.tailLines);
  for (const line of lines) res.write(format(line));
  if (!options.follow || container.hasEnded) { res.end(); return; }
  const stop = container.follow((line) => {
    if (line === null) { stop(); res.end(); return; }
    res.write(format(line));
  });
  res.on('close', stop);
}
