// Follows the container log with the API's timestamps; each line keeps when the harness got it.
import { PassThrough } from 'node:stream';
import { createInterface } from 'node:readline';
import * as k8s from '@kubernetes/client-node';
import type { Cluster } from '../kube.ts';
import type { Observation } from '../observation.ts';
import type { RunClock } from './clock.ts';

type LogLine = Observation['evidence']['logLines'][number];

const MAX_LINE = 64 * 1024;

export class LogFollower {
  readonly lines: LogLine[] = [];
  ended = false;
  error: string | null = null;
  private controller: AbortController | null = null;
  private endWaiters: (() => void)[] = [];

  async start(cluster: Cluster, namespace: string, pod: string, container: string, clock: RunClock): Promise<void> {
    const stream = new PassThrough();
    createInterface({ input: stream }).on('line', (raw) => {
      const space = raw.indexOf(' ');
      const stamped = space > 0 && /^\d{4}-\d\d-\d\dT/.test(raw);
      this.lines.push({ receivedAt: clock.now(), apiTime: stamped ? raw.slice(0, space) : null, text: (stamped ? raw.slice(space + 1) : raw).slice(0, MAX_LINE) });
    }).on('close', () => this.finish(null));
    stream.on('error', (error) => this.finish(error.message));
    this.controller = await new k8s.Log(cluster.kc).log(namespace, pod, container, stream, { follow: true, timestamps: true });
  }

  private finish(error: string | null): void {
    if (this.ended) return;
    this.ended = true;
    this.error = error;
    for (const wake of this.endWaiters) wake();
  }

  /** Waits for the stream to end (the container exited) or the timeout. */
  waitForEnd(timeoutMs: number): Promise<boolean> {
    if (this.ended) return Promise.resolve(true);
    return new Promise((resolve) => {
      const timer = setTimeout(() => resolve(false), timeoutMs);
      this.endWaiters.push(() => { clearTimeout(timer); resolve(true); });
    });
  }

  stop(): void {
    this.controller?.abort();
  }
}

/** The lab server's own events, parsed from the log; lines that are not its JSON are skipped. */
export function labEvents(lines: LogLine[]): { event: string; time: string; mono: number; [key: string]: unknown }[] {
  const events = [];
  for (const line of lines) {
    if (!line.text.startsWith('{')) continue;
    try {
      const parsed = JSON.parse(line.text);
      if (typeof parsed?.event === 'string' && typeof parsed.time === 'string' && typeof parsed.mono === 'number') events.push(parsed);
    } catch { /* not a lab event */ }
  }
  return events;
}
