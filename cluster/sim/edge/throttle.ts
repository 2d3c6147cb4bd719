// providersThrottleDuration as Traefik applies it (pkg/provider/aggregator/aggregator.go:32-58,
// maybeThrottledProvide): the provider writes into a ring channel that keeps only the latest
// configuration; a loop takes one, applies it, then sleeps the throttle. So a change is live at once
// when nothing was applied in the last throttle window, else at that window's end (the newest
// configuration by then, the ones between dropped). The edge's lag is therefore 0 to 2 s, not 2 s.

export class ProviderThrottle<T> {
  private pending: { value: T } | null = null;
  private sleeping = false;
  private timer: NodeJS.Timeout | undefined;

  private readonly throttleMs: number;
  private readonly apply: (value: T) => void;

  constructor(throttleMs: number, apply: (value: T) => void) {
    this.throttleMs = throttleMs;
    this.apply = apply;
  }

  /** The ring channel's in: replaces whatever is waiting. */
  offer(value: T): void {
    this.pending = { value };
    if (!this.sleeping) this.take();
  }

  private take(): void {
    const next = this.pending;
    if (!next) return;
    this.pending = null;
    this.apply(next.value);
    if (this.throttleMs <= 0) return;
    this.sleeping = true;
    this.timer = setTimeout(() => {
      this.sleeping = false;
      this.take();
    }, this.throttleMs);
  }

  stop(): void {
    clearTimeout(this.timer);
  }
}
