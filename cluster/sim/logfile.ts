// A container log file, followed as the kubelet follows the runtime's log files: the container's
// stdout and stderr are plain files opened for append, so an exec hook reaches the log by
// appending to the same file (`>> "$LAB_HOOK_LOG"`). Regular files work alike on Linux and
// macOS; no /proc/<pid>/fd and no FIFO.
import { closeSync, openSync, readSync, watch, type FSWatcher } from 'node:fs';

/** A safety net under fs.watch, which may merge or drop change notices. */
const POLL_INTERVAL_MS = 100;
const READ_CHUNK = 64 * 1024;

export class LogFileFollower {
  private readonly fd: number;
  private position = 0;
  private partial = '';
  private closed = false;
  private readonly watcher: FSWatcher | null;
  private readonly poll: NodeJS.Timeout;
  private readonly onLine: (text: string) => void;
  /**
   * One buffer for every read: a fresh 64 KiB per drain (one per write the container makes, under load
   * thousands a second) kept the sim's collector busy (bench:verify, sim_cpu_us_per_request).
   */
  private readonly buffer = Buffer.allocUnsafe(READ_CHUNK);

  constructor(path: string, onLine: (text: string) => void) {
    this.onLine = onLine;
    this.fd = openSync(path, 'r');
    let watcher: FSWatcher | null = null;
    try {
      watcher = watch(path, { persistent: false }, () => this.drain());
      watcher.on('error', () => {});
    } catch {
      /* the poll alone still follows the file */
    }
    this.watcher = watcher;
    this.poll = setInterval(() => this.drain(), POLL_INTERVAL_MS);
    this.poll.unref();
  }

  /** Reads whatever was appended since the last read and hands on each complete line. */
  drain(): void {
    if (this.closed) return;
    const buffer = this.buffer;
    for (;;) {
      const n = readSync(this.fd, buffer, 0, READ_CHUNK, this.position);
      if (n <= 0) break;
      this.position += n;
      this.partial += buffer.toString('utf8', 0, n);
      let newline: number;
      while ((newline = this.partial.indexOf('\n')) >= 0) {
        this.onLine(this.partial.slice(0, newline));
        this.partial = this.partial.slice(newline + 1);
      }
    }
  }

  /** A last read, the unterminated tail as a line of its own, then no more. */
  close(): void {
    if (this.closed) return;
    this.drain();
    if (this.partial) this.onLine(this.partial);
    this.closed = true;
    this.watcher?.close();
    clearInterval(this.poll);
    closeSync(this.fd);
  }
}
