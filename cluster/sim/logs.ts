// pods/log: the container's lines, with the kubelet's RFC 3339 nano prefix when asked; with
// follow the stream stays open and ends after the container exits, when the kubelet's reader next looks.
import type { ServerResponse } from 'node:http';
import type { ContainerProcess, LogLine } from './runtime.ts';
import { logTimestamp } from './time.ts';

export interface LogOptions {
  follow: boolean;
  timestamps: boolean;
  sinceTime: string | null;
  tailLines: number | null;
  /** The kubelet's log reader's look-again period (versions.ts logReaderCheckMs); 0 ends a follow at the exit. */
  checkPeriodMs: number;
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
  // The kubelet's log reader (cri-client pkg/logs/logs.go ReadLogs, waitLogs): at the end of the file it
  // asks the runtime whether the container runs, and if so waits for a write or logForceCheckPeriod (1 s).
  // So a follow ends at the first check after the exit, up to a second after the last write.
  let wokeAt = performance.now();
  let ending: NodeJS.Timeout | undefined;
  const stop = container.follow((line) => {
    if (line !== null) { wokeAt = performance.now(); res.write(format(line)); return; }
    stop();
    const period = options.checkPeriodMs;
    if (period <= 0) { res.end(); return; }
    ending = setTimeout(() => res.end(), period - ((performance.now() - wokeAt) % period));
  });
  res.on('close', () => { stop(); clearTimeout(ending); });
}
