// The kubelet's pod watch as client-go's Reflector keeps it (pkg/kubelet/config/apiserver.go makes
// one with the defaults; client-go v0.37.2 tools/cache/reflector.go). When the API server dies the
// watch ends, and the reflector watches again at once from its last resourceVersion; a refused
// connection is "retriable" (isWatchErrorRetriable) and waits r.delayHandler() before the next try:
// wait.Backoff{0.8 s, factor 2, cap 30 s, jitter 1.0} behind DelayWithReset(2 min). So the waits are
// [0.8,1.6), [1.6,3.2), … [25.6,51.2), then [30,60) s, and the kubelet learns nothing of the API —
// no new pod, no delete — until the first try after the API is back; then every change it missed
// arrives in order (a resumed watch). The backoff is reset only when 2 min have passed since its
// last reset (backoffManager.Step), so outages close together back off from where the last one left.
// Measured on the real node (v1.37.2, 2026-12-01): kube-apiserver SIGKILLed for 20 s, serving again
// 24–29 s after the kill; the kubelet then took up to ~40 s more to see new pods (test:cluster:faults).
// A stalled API holds the watch (nothing arrives, nothing fails), and a stopped kubelet reads nothing.
import type { ApiReachability, KubeletPause } from './faults.ts';

const BACKOFF_INIT_MS = 800;
const BACKOFF_MAX_MS = 30_000;
const BACKOFF_RESET_MS = 120_000;
const BACKOFF_FACTOR = 2;
const BACKOFF_JITTER = 1;

/** wait.Backoff.Step with DelayWithReset's backoffManager: the next wait, jittered. */
export class ReflectorBackoff {
  private duration = BACKOFF_INIT_MS;
  private steps = Math.ceil(BACKOFF_MAX_MS / BACKOFF_INIT_MS);
  private lastStart: number;
  private readonly now: () => number;
  private readonly random: () => number;

  constructor(now: () => number = () => performance.now(), random: () => number = Math.random) {
    this.now = now;
    this.random = random;
    this.lastStart = now();
  }

  step(): number {
    if (this.now() - this.lastStart > BACKOFF_RESET_MS) {
      this.duration = BACKOFF_INIT_MS;
      this.steps = Math.ceil(BACKOFF_MAX_MS / BACKOFF_INIT_MS);
      this.lastStart = this.now();
    }
    const jitter = (d: number) => d + this.random() * BACKOFF_JITTER * d;
    if (this.steps < 1) return jitter(this.duration);
    this.steps--;
    let next = this.duration * BACKOFF_FACTOR;
    if (next > BACKOFF_MAX_MS) {
      next = BACKOFF_MAX_MS;
      this.steps = 0;
    }
    const wait = jitter(this.duration);
    this.duration = next;
    return wait;
  }
}

/** What the kubelet's pod source receives of the store's events: all of them, once its watch is up. */
export class PodWatchLink<E> {
  private readonly queue: E[] = [];
  private cut = false;
  private retry: NodeJS.Timeout | null = null;
  private stopped = false;
  private readonly deliver: (event: E) => void;
  private readonly reach: ApiReachability;
  private readonly pause: KubeletPause;
  private readonly backoff: ReflectorBackoff;
  private readonly off: () => void;

  constructor(
    reach: ApiReachability,
    pause: KubeletPause,
    deliver: (event: E) => void,
    backoff = new ReflectorBackoff(),
  ) {
    this.reach = reach;
    this.pause = pause;
    this.deliver = deliver;
    this.backoff = backoff;
    const refused = () => {
      if (this.cut) return;
      this.cut = true;
      this.watchAgain();
    };
    const flow = () => this.flush();
    reach.on('refused', refused);
    reach.on('released', flow);
    pause.on('resumed', flow);
    this.off = () => {
      reach.off('refused', refused);
      reach.off('released', flow);
      pause.off('resumed', flow);
    };
  }

  send(event: E): void {
    if (this.stopped) return;
    this.queue.push(event);
    this.flush();
  }

  /** The reflector's next watch: it succeeds if the API listens by then, else waits its backoff. */
  private watchAgain(): void {
    this.retry = null;
    if (this.stopped) return;
    if (this.reach.serving) {
      this.cut = false;
      this.flush();
      return;
    }
    // A stopped kubelet's timer fires when it runs again.
    this.retry = setTimeout(() => this.pause.whenRunning(() => this.watchAgain()), this.backoff.step());
    this.retry.unref();
  }

  private flush(): void {
    if (this.stopped || this.cut || this.reach.stalled || this.pause.paused) return;
    while (this.queue.length) this.deliver(this.queue.shift()!);
  }

  stop(): void {
    this.stopped = true;
    if (this.retry) clearTimeout(this.retry);
    this.queue.length = 0;
    this.off();
  }
}
