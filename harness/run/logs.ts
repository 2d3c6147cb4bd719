// Follows the container log with the API's timestamps; each line keeps when the harness got it.
// A stream the API cut is made whole afterwards from a full read of the log.
import { followLog, readLog, type Cluster } from '../kube/index.ts';
import type { Observation } from '../observation.ts';
import type { RunClock } from './clock.ts';

type LogLine = Observation['evidence']['logLines'][number];

const MAX_LINE = 64 * 1024;

function splitStamp(raw: string): { apiTime: string | null; text: string } {
  const space = raw.indexOf(' ');
  const stamped = space > 0 && /^\d{4}-\d\d-\d\dT/.test(raw);
  return { apiTime: stamped ? raw.slice(0, space) : null, text: (stamped ? raw.slice(space + 1) : raw).slice(0, MAX_LINE) };
}

export class LogFollower {
  lines: LogLine[] = [];
  ended = false;
  error: string | null = null;
  private handle: { stop(): void } | null = null;
  private endWaiters: (() => void)[] = [];

  async start(cluster: Cluster, namespace: string, pod: string, container: string, clock: RunClock): Promise<void> {
    this.handle = await followLog(cluster, namespace, pod, container, {
      line: (raw) => this.lines.push({ receivedAt: clock.now(), ...splitStamp(raw) }),
      end: (error) => this.finish(error),
    });
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

  /**
   * After a cut stream: reads the whole log again and puts in, in log order, the lines the stream
   * missed (received now). The lines it did deliver keep their own receive times.
   */
  async recover(cluster: Cluster, namespace: string, pod: string, container: string, clock: RunClock): Promise<number> {
    const whole = await readLog(cluster, namespace, pod, container);
    const received = new Map<string, LogLine[]>();
    for (const line of this.lines) {
      const key = `${line.apiTime} ${line.text}`;
      received.set(key, [...(received.get(key) ?? []), line]);
    }
    const at = clock.now();
    let added = 0;
    const merged: LogLine[] = [];
    for (const raw of whole.split('\n')) {
      if (!raw) continue;
      const parsed = splitStamp(raw);
      const same = received.get(`${parsed.apiTime} ${parsed.text}`);
      if (same?.length) merged.push(same.shift()!);
      else { merged.push({ receivedAt: at, ...parsed }); added++; }
    }
    this.lines = merged;
    // The log is whole again: the stream's break no longer hides anything.
    this.error = null;
    this.ended = true;
    return added;
  }

  stop(): void {
    this.handle?.stop();
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
