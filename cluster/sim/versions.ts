// The Kubernetes minors the simulator emulates, each as that release's own source has it: one entry per
// minor, never a blend. Read from the Go modules k8s.io/kubernetes@v1.34.4, v1.35.4, v1.36.3, v1.37.2 and
// v1.38.0-beta.0. Their feature gates (PLEGOnDemandRelist, ContainerStopSignals) are feature-gates.ts's.
import { TermlabError } from '../../lib/errors.ts';

export interface SimMinor {
  /** The release whose source each behaviour below was read from; /version reports it. */
  release: string;
  /** Event messages of kuberuntime_container.go startContainer (the reasons, Created and Started, never changed). */
  createdMessage(container: string): string;
  startedMessage(container: string): string;
  /**
   * How often the kubelet's log reader looks again at a followed log (cri-client pkg/logs/logs.go waitLogs,
   * logForceCheckPeriod, 1 s in every release; the same file in 1.35.4 and 1.37.2 but for its logger): a follow
   * ends at its first look after the exit, or sooner when the kubelet removes the container (logs.ts), and the
   * harness holds its finalizer until the log has ended. 0 ends it at the exit: 1.34 keeps the timing its record
   * agreed with 15 of 15 (reports/fidelity/v1.34), where the phase-locked relists hid it.
   */
  logReaderCheckMs: number;
}

// 1.34.4 kuberuntime_container.go:288,297: "Created container: %v", "Started container %v".
const MESSAGES_1_34 = {
  createdMessage: (c: string) => `Created container: ${c}`,
  startedMessage: (c: string) => `Started container ${c}`,
};
// 1.35.4, 1.36.3, 1.37.2 kuberuntime_container.go:289,298 (v1.38.0-beta.0: :301,310): "Container created", "Container started".
const MESSAGES_1_35 = { createdMessage: () => 'Container created', startedMessage: () => 'Container started' };

export const SIM_MINORS: ReadonlyMap<string, SimMinor> = new Map([
  ['1.34', { release: 'v1.34.4', ...MESSAGES_1_34, logReaderCheckMs: 0 }],
  ['1.35', { release: 'v1.35.4', ...MESSAGES_1_35, logReaderCheckMs: 1000 }],
  ['1.36', { release: 'v1.36.3', ...MESSAGES_1_35, logReaderCheckMs: 1000 }],
  ['1.37', { release: 'v1.37.2', ...MESSAGES_1_35, logReaderCheckMs: 1000 }],
  // v1.38.0-beta.0: the termination path is 1.37.2's (docs/versions.md lists what changed and why none of it
  // reaches the sim); the messages at kuberuntime_container.go:301,310, logForceCheckPeriod still 1 s.
  ['1.38', { release: 'v1.38.0-beta.0', ...MESSAGES_1_35, logReaderCheckMs: 1000 }],
]);
/** 1.37 until a 1.38.0 release is served (only v1.38.0-beta.0 is). */
export const DEFAULT_SIM_MINOR = '1.37';

/** `--kube-version 1.36` (a patch, `v1.36.3` or `v1.38.0-beta.0`, is taken as its minor); anything else is refused, naming the choices. */
export function simMinor(given: string | undefined): { minor: string; behaviour: SimMinor } {
  const text = (given ?? DEFAULT_SIM_MINOR).trim().replace(/^v/, '');
  const minor = /^(\d+\.\d+)(?:\.\d+(?:-[0-9A-Za-z.]+)?)?$/.exec(text)?.[1];
  const behaviour = minor === undefined ? undefined : SIM_MINORS.get(minor);
  if (!minor || !behaviour) {
    throw new TermlabError(
      'USAGE',
      `--kube-version: the simulator emulates ${[...SIM_MINORS.keys()].join(', ')}; got ${JSON.stringify(given)}`,
    );
  }
  return { minor, behaviour };
}

/** /version as that release's API server answers it, marked as the simulator's. */
export function versionInfo(minor: string, behaviour: SimMinor) {
  return {
    major: '1',
    minor: minor.split('.')[1]!,
    gitVersion: `${behaviour.release}-termlab-sim`,
    gitCommit: '',
    gitTreeState: 'clean',
    buildDate: '2026-01-01T00:00:00Z',
    goVersion: 'n/a',
    compiler: 'n/a',
    platform: `${process.platform}/${process.arch}`,
  };
}
export type VersionInfo = ReturnType<typeof versionInfo>;
