// Memory limits: the kernel's OOM killer, simulated. Each tick reads the memory of every container
// with a limit; a container over its limit is killed with SIGKILL and reported as OOMKilled, as
// containerd reports a cgroup OOM kill. A cgroup kills at the moment the limit is crossed, so the
// tick is as short as reading the sizes allows: /proc on Linux costs microseconds (every 50 ms) and
// tells anonymous from file-backed memory; macOS has only `ps`, a process per read (every 250 ms),
// and its whole resident size, so a kill there comes somewhat early.
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';

const KIB = 1024;
export type RssReader = (pids: number[]) => Promise<Map<number, number>>;

/** pid -> resident KiB, from `ps` (Linux and macOS alike). */
export const readRssWithPs: RssReader = (pids) =>
  new Promise((resolve) => {
    execFile('ps', ['-o', 'pid=,rss=', '-p', pids.join(',')], (_error, stdout) => {
      const sizes = new Map<number, number>();
      for (const line of String(stdout ?? '').split('\n')) {
        const [pid, rssKiB] = line.trim().split(/\s+/).map(Number);
        if (Number.isInteger(pid) && Number.isFinite(rssKiB)) sizes.set(pid!, rssKiB!);
      }
      resolve(sizes);
    });
  });

const STATUS_FIELDS = ['RssAnon', 'RssShmem', 'VmRSS'].map((name) => new RegExp(`^${name}:\\s+(\\d+) kB`, 'm'));

/**
 * pid -> KiB the kernel cannot reclaim, from /proc/<pid>/status: anonymous and shared memory
 * (RssAnon + RssShmem). A cgroup at its limit first drops file-backed pages (the program's own
 * code, ~33 MiB for Node.js) and OOM-kills only when what is left does not fit: counted whole, the
 * simulator killed 0.5 s early against the real node. VmRSS where the kernel has no split (< 4.5).
 * A process already gone is left out.
 */
export const readRssFromProc: RssReader = async (pids) => {
  const sizes = new Map<number, number>();
  await Promise.all(
    pids.map(async (pid) => {
      const status = await readFile(`/proc/${pid}/status`, 'utf8').catch(() => '');
      const [anon, shmem, rss] = STATUS_FIELDS.map((field) => field.exec(status)?.[1]);
      if (anon !== undefined) sizes.set(pid, Number(anon) + Number(shmem ?? 0));
      else if (rss !== undefined) sizes.set(pid, Number(rss));
    }),
  );
  return sizes;
};

const PLATFORM_READER: { read: RssReader; intervalMs: number } =
  process.platform === 'linux' ? { read: readRssFromProc, intervalMs: 50 } : { read: readRssWithPs, intervalMs: 250 };
const UNITS: Record<string, number> = {
  '': 1,
  k: 1e3,
  M: 1e6,
  G: 1e9,
  T: 1e12,
  Ki: 2 ** 10,
  Mi: 2 ** 20,
  Gi: 2 ** 30,
  Ti: 2 ** 40,
};

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
  private readonly reader: { read: RssReader; intervalMs: number };
  private timer: NodeJS.Timeout | undefined;
  private polling = false;

  constructor(reader = PLATFORM_READER) {
    this.reader = reader;
  }

  /** Watches a process until forget(pid); kill() is called once if it goes over the limit. */
  watch(entry: Limited): void {
    this.watched.set(entry.pid, entry);
    if (!this.timer) {
      this.timer = setInterval(() => this.poll(), this.reader.intervalMs);
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
    void this.reader.read([...this.watched.keys()]).then((sizes) => {
      this.polling = false;
      for (const [pid, rssKiB] of sizes) {
        const entry = this.watched.get(pid);
        if (entry && rssKiB * KIB > entry.limitBytes) {
          this.watched.delete(pid);
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
