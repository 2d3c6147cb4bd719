// pods/log: the container's lines, with the kubelet's RFC 3339 nano prefix when asked; with
// follow the stream stays open and ends after the container exits, when the kubelet's reader next looks or
// the kubelet removes the container.
// The kubelet serves it, so a stopped kubelet answers nothing until it runs again, and a container the
// runtime has removed has no log left to read.
import type { ServerResponse } from 'node:http';
import type { KubeletPause } from './faults.ts';
import type { ContainerLogSource } from './kubelet-server.ts';
import type { LogLine } from './runtime.ts';
import { logTimestamp } from './time.ts';

export interface LogOptions {
  follow: boolean;
  timestamps: boolean;
  sinceTime: string | null;
  tailLines: number | null;
  /** The kubelet's log reader's look-again period (versions.ts logReaderCheckMs); 0 ends a follow at the exit. */
  checkPeriodMs: number;
}

export function serveLog(
  res: ServerResponse,
  source: ContainerLogSource,
  options: LogOptions,
  pause: KubeletPause,
): void {
  const since = options.sinceTime ? Date.parse(options.sinceTime) : null;
  const format = (line: LogLine) => `${options.timestamps ? `${logTimestamp(line.wallMs)} ` : ''}${line.text}\n`;
  const container = source.process;
  res.on('error', () => {});
  // Lines that come while the kubelet is stopped wait in its buffers, and flow when it runs.
  const write = (text: string | null) =>
    pause.whenRunning(() => {
      if (res.destroyed || res.writableEnded) return;
      if (text === null) res.end();
      else res.write(text);
    });
  pause.whenRunning(() => {
    if (res.destroyed) return;
    res.writeHead(200, { 'content-type': 'text/plain', 'cache-control': 'no-cache, private' });
    res.flushHeaders();
    // kuberuntime GetContainerLogs: ContainerStatus fails for a removed container; the kubelet has
    // already sent 200 (its zero-byte write), so the error is the body, with no newline (node, v1.37.2).
    if (source.removed) {
      res.end(`unable to retrieve container logs for ${source.containerID}`);
      return;
    }
    let lines = container.lines.filter((l) => since === null || l.wallMs >= since);
    if (options.tailLines !== null) lines = lines.slice(-options.tailLines);
    for (const line of lines) res.write(format(line));
    if (!options.follow || container.hasEnded) {
      res.end();
      return;
    }
    // The kubelet's log reader (cri-client pkg/logs/logs.go ReadLogs, waitLogs): at the end of the file it
    // asks the runtime whether the container runs, and if so waits for a write or logForceCheckPeriod (1 s).
    // So a follow ends at the first check after the exit, up to a second after the last write.
    // Or sooner: the kubelet's removal of the dead container deletes the file, which wakes the reader (measured
    // on the v1.37.2 node: a follow ended within 0.07 s of containerd's RemoveContainer whenever that came first).
    let wokeAt = performance.now();
    let ending: NodeJS.Timeout | undefined;
    let unRemoved = () => {};
    const end = () => {
      clearTimeout(ending);
      unRemoved();
      write(null);
    };
    const stop = container.follow((line) => {
      if (line !== null) {
        wokeAt = performance.now();
        write(format(line));
        return;
      }
      stop();
      const period = options.checkPeriodMs;
      if (period <= 0) {
        write(null);
        return;
      }
      ending = setTimeout(end, period - ((performance.now() - wokeAt) % period));
      unRemoved = container.onLogRemoved(end);
    });
    res.on('close', () => {
      stop();
      clearTimeout(ending);
      unRemoved();
    });
  });
}
