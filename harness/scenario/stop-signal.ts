// The stop-signal lesson's two scenario fields (KEP-4960): the signal the lab server drains on, and the
// container's lifecycle.stopSignal, with the names the API server accepts.
import { z } from 'zod';
import { nearest } from '../../lib/suggest.ts';
import { LAB_DRAIN_SIGNALS } from '../../server/contract.ts';

/**
 * pkg/apis/core/validation/validation.go supportedStopSignalsLinux (v1.38.0-beta.0 :3660, the same in v1.37.2):
 * the names lifecycle.stopSignal may take on a pod with spec.os.name linux.
 */
export const LINUX_STOP_SIGNALS = [
  'SIGABRT',
  'SIGALRM',
  'SIGBUS',
  'SIGCHLD',
  'SIGCLD',
  'SIGCONT',
  'SIGFPE',
  'SIGHUP',
  'SIGILL',
  'SIGINT',
  'SIGIO',
  'SIGIOT',
  'SIGKILL',
  'SIGPIPE',
  'SIGPOLL',
  'SIGPROF',
  'SIGPWR',
  'SIGQUIT',
  'SIGSEGV',
  'SIGSTKFLT',
  'SIGSTOP',
  'SIGSYS',
  'SIGTERM',
  'SIGTRAP',
  'SIGTSTP',
  'SIGTTIN',
  'SIGTTOU',
  'SIGURG',
  'SIGUSR1',
  'SIGUSR2',
  'SIGVTALRM',
  'SIGWINCH',
  'SIGXCPU',
  'SIGXFSZ',
  'SIGRTMIN',
  'SIGRTMIN+1',
  'SIGRTMIN+2',
  'SIGRTMIN+3',
  'SIGRTMIN+4',
  'SIGRTMIN+5',
  'SIGRTMIN+6',
  'SIGRTMIN+7',
  'SIGRTMIN+8',
  'SIGRTMIN+9',
  'SIGRTMIN+10',
  'SIGRTMIN+11',
  'SIGRTMIN+12',
  'SIGRTMIN+13',
  'SIGRTMIN+14',
  'SIGRTMIN+15',
  'SIGRTMAX-14',
  'SIGRTMAX-13',
  'SIGRTMAX-12',
  'SIGRTMAX-11',
  'SIGRTMAX-10',
  'SIGRTMAX-9',
  'SIGRTMAX-8',
  'SIGRTMAX-7',
  'SIGRTMAX-6',
  'SIGRTMAX-5',
  'SIGRTMAX-4',
  'SIGRTMAX-3',
  'SIGRTMAX-2',
  'SIGRTMAX-1',
  'SIGRTMAX',
] as const;
export type StopSignal = (typeof LINUX_STOP_SIGNALS)[number];

/** The runtime's signal when no stopSignal reaches it: the image's STOPSIGNAL, which the lab's image leaves at TERM. */
export const DEFAULT_STOP_SIGNAL = 'SIGTERM' as const;

const quoted = (input: unknown) => (typeof input === 'string' ? JSON.stringify(input) : String(input));

/** LAB_DRAIN_SIGNAL: the one signal the graceful lab server drains on (SIGTERM unless set). */
export const DrainSignalSchema = z.enum(LAB_DRAIN_SIGNALS, {
  error: (issue) =>
    `${quoted(issue.input)} is not a signal the lab server drains on (one of ${LAB_DRAIN_SIGNALS.join(', ')})`,
});

/** The 65 names in short, for a message that must fit one line (docs/lessons.md lists them all). */
const LINUX_STOP_SIGNALS_IN_SHORT =
  "signal(7)'s names from SIGABRT to SIGXFSZ, SIGRTMIN, SIGRTMIN+1 to +15, SIGRTMAX-14 to -1, SIGRTMAX";

/** The container's lifecycle.stopSignal: any name the API allows for linux (the lab renders spec.os.name linux). */
export const StopSignalSchema = z.enum(LINUX_STOP_SIGNALS, {
  error: (issue) => {
    const near = typeof issue.input === 'string' ? nearest(issue.input.toUpperCase(), [...LINUX_STOP_SIGNALS]) : null;
    return `${quoted(issue.input)} is not a stop signal Kubernetes allows for linux${near ? `; did you mean ${near}?` : ` (${LINUX_STOP_SIGNALS_IN_SHORT})`}`;
  },
});

/** The signal the scenario's lab server drains on. */
export const drainSignalOf = (s: { drainSignal?: string }) => s.drainSignal ?? DEFAULT_STOP_SIGNAL;

/**
 * What the lab server does with the signals a scenario can send it (server/contract.ts LAB_DRAIN_SIGNAL): it
 * drains on its drain signal and, draining on another, leaves at once (17) on SIGTERM. Any other signal would meet
 * no handler of the lab's: a scenario may not ask for it.
 */
export function stopSignalProblem(s: {
  mode: string;
  drainSignal?: string;
  stopSignal?: string;
  sidecar?: unknown;
  labPair?: { role: string };
}): { message: string; path: string[] } | null {
  const drain = drainSignalOf(s);
  // The stop-signal pair's halves: a server draining on another signal, sent SIGTERM, then its drain signal.
  const role = s.labPair?.role;
  if (role === 'term-default' || role === 'quit-stop-signal') {
    const stop = s.stopSignal ?? DEFAULT_STOP_SIGNAL;
    if (drain === DEFAULT_STOP_SIGNAL || stop !== (role === 'term-default' ? DEFAULT_STOP_SIGNAL : drain))
      return {
        message: `the stop-signal pair's halves drain on a signal other than SIGTERM (drainSignal); term-default leaves stopSignal out, quit-stop-signal sets it to the drainSignal`,
        path: ['labPair', 'role'],
      };
  }
  if (s.sidecar !== undefined && (s.drainSignal !== undefined || s.stopSignal !== undefined))
    return {
      message: 'drainSignal and stopSignal are the one-container stop-signal lesson: leave out the sidecar block',
      path: [s.stopSignal !== undefined ? 'stopSignal' : 'drainSignal'],
    };
  if (drain !== DEFAULT_STOP_SIGNAL && s.mode !== 'graceful')
    return {
      message: `a drainSignal changes what the graceful server drains on: it needs mode: graceful (this scenario's is ${s.mode})`,
      path: ['drainSignal'],
    };
  if (s.stopSignal !== undefined && s.stopSignal !== DEFAULT_STOP_SIGNAL && s.stopSignal !== drain)
    return {
      message: `the lab server handles ${DEFAULT_STOP_SIGNAL} and its drainSignal (${drain}) only: a stopSignal of ${s.stopSignal} would meet no handler of the lab's (set drainSignal: ${s.stopSignal}, or stopSignal: ${drain})`,
      path: ['stopSignal'],
    };
  return null;
}
