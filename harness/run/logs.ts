// Follows the container log with the API's timestamps; each line keeps when the harness got it.
// A stream the API cut is made whole afterwards from a full read of the log.
import { apiErrorText, followLog, readLog, type Cluster } from '../kube/index.ts';
import type { HarnessTime, Observation } from '../observation/schema.ts';
import type { RunClock } from './clock.ts';

type LogLine = Observation['evidence']['logLines'][number];

const MAX_LINE = 64 * 1024;

function splitStamp(raw: string): { apiTime: string | null; text: string } {
  const space = raw.indexOf(' ');
  const stamped = space > 0 && /^\d{4}-\d\d-\d\dT/.test(raw);
  return {
    apiTime: stamped ? raw.slice(0, space) : null,
    text: (stamped ? raw.slice(space + 1) : raw).slice(0, MAX_LINE),
  };
}

export class LogFollower {
  lines: LogLine[] = [];
  ended = false;
  error: string | null = null;
  /** Times the API cut the stream and it was followed again from the last line. */
  resumed = 0;
  /**
   * When the stream ended by itself, whole: the kubelet's log reader found the container gone (its removal,
   * or its next look after the exit). Null while open, and for a stream cut, stopped by the harness, or made
   * whole by a read: then nothing but the harness decided its end.
   */
  streamEndedAt: HarnessTime | null = null;
  private handle: { stop(): void } | null = null;
  private stopped = false;
  private readonly seen = new Set<string>();
  private endWaiters: (() => void)[] = [];
  private target: { cluster: Cluster; namespace: string; pod: string; container: string; clock: RunClock } | null =
    null;

  /** `sinceTime` (RFC 3339, whole seconds): only the lines from then, for a long-lived container (an edge). */
  async start(
    cluster: Cluster,
    namespace: string,
    pod: string,
    container: string,
    clock: RunClock,
    sinceTime?: string,
  ): Promise<void> {
    this.target = { cluster, namespace, pod, container, clock };
    await this.follow(sinceTime);
  }

  private async follow(sinceTime: string | undefined): Promise<void> {
    const { cluster, namespace, pod, container } = this.target!;
    this.handle = await followLog(
      cluster,
      namespace,
      pod,
      container,
      {
        line: (raw) => this.take(splitStamp(raw), this.target!.clock.now()),
        end: (error) => this.onEnd(error),
      },
      sinceTime,
    );
    if (this.stopped) this.handle.stop();
  }

  /** Keeps a line once: a stream followed again from a time repeats the lines of that second. */
  private take(line: { apiTime: string | null; text: string }, receivedAt: LogLine['receivedAt']): boolean {
    const key = `${line.apiTime} ${line.text}`;
    if (line.apiTime !== null && this.seen.has(key)) return false;
    this.seen.add(key);
    this.lines.push({ receivedAt, ...line });
    return true;
  }

  private onEnd(error: string | null): void {
    if (error === null && !this.stopped && !this.ended) this.streamEndedAt = this.target!.clock.now();
    if (error === null || this.stopped) {
      this.finish(error);
      return;
    }
    // Cut by the API (a restart), not ended by the container: follow again from the last line.
    this.resumed++;
    const since = [...this.lines].reverse().find((l) => l.apiTime !== null)?.apiTime ?? undefined;
    this.follow(since).catch((failure: unknown) =>
      this.finish(`${error}; following again failed: ${apiErrorText(failure)}`),
    );
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
      this.endWaiters.push(() => {
        clearTimeout(timer);
        resolve(true);
      });
    });
  }

  /**
   * Last resort after a stream that could not be followed again: reads the whole log and appends
   * the lines the stream missed, received now (the file keeps lines in the order they arrived). A
   * log the kubelet no longer has (no timestamped lines in the answer) changes nothing, and the
   * stream's error stays on record.
   */
  async recover(): Promise<number> {
    const { cluster, namespace, pod, container, clock } = this.target!;
    const whole = (await readLog(cluster, namespace, pod, container)).split('\n').filter(Boolean).map(splitStamp);
    if (!whole.some((l) => l.apiTime !== null)) return 0;
    const at = clock.now();
    let added = 0;
    for (const line of whole) if (line.apiTime !== null && this.take(line, at)) added++;
    this.error = null;
    this.ended = true;
    return added;
  }

  stop(): void {
    this.stopped = true;
    this.handle?.stop();
  }
}
