// Memory limits: the kernel's OOM killer, simulated. One `ps` a tick reads the resident size of
// every container with a limit (ps works alike on Linux and macOS); a container over its limit
// is killed with SIGKILL and reported as OOMKilled, as containerd reports a cgroup OOM kill.
import { execFile } from 'node:child_process';

const POLL_INTERVAL_MS = 250;
const KIB = 1024;
const UNITS: Record<string, number> = { '': 1, k: 1e3, M: 1e6, G: 1e9, T: 1e12, Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, Ti: 2 ** 40 };

/** A Kubernetes memory quantity ("256Mi", "1G", "134217728") in bytes; undefined if it is not one. */
export function memoryBytes(quantity: unknown): number | undefined {
  const m = /^(\d+(?:\.\d+)?)(|k|M|G|T|Ki|Mi|Gi|Ti)$/.exec(String(quantity ?? ''));
  return m ? Math.floor(Number(m[1]) * UNITS[m[2]!]!) : undefined;
}

interface Limited {
  pid: number;
  limitBytes: number;
  kill(): void;
}

export class OomKiller {
  private readonly watched = new Map<number, Limited>();
  private timer: NodeJS.Timeout | undefined;
  private polling = false;

  /** Watches a process until forget(pid); kill() is called once if it goes over the limit. */
  watch(entry: Limited): void {
    this.watched.set(entry.pid, entry);
    if (!this.timer) {
      this.timer = setInterval(() => this.poll(), POLL_INTERVAL_MS);
      this.timer.unref();
    }
  }

  forget(pid: number): void {
    this.watched.delete(pid);
    if (this.watched.size === 0) this.stop();
  }

  private poll(): void {
    if (this.polling || this.watched.size === 0) return;
    this.polling = true;
    execFile('ps', ['-o', 'pid=,rss=', '-p', [...this.watched.keys()].join(',')], (_error, stdout) => {
      this.polling = false;
      for (const line of String(stdout ?? '').split('\n')) {
        const [pid, rssKiB] = line.trim().split(/\s+/).map(Number);
        const entry = pid === undefined ? undefined : this.watched.get(pid);
        if (entry && rssKiB !== undefined && rssKiB * KIB > entry.limitBytes) {
          this.watched.delete(pid!);
          entry.kill();
        }
      }
    });
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }
}
