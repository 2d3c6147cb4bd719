// The API server's handling of lifecycle.stopSignal (KEP-4960, gate ContainerStopSignals), after
// pkg/api/pod/util.go dropContainerStopSignals and pkg/apis/core/validation/validation.go validateStopSignal
// (the same code in v1.34.4 to v1.38.0-beta.0). Pods and pod templates alike (DropDisabledTemplateFields).
import type { FeatureGates } from './feature-gates.ts';
import type { ContainerSpec, PodSpec } from './pod-types.ts';

type Spec = Partial<Pick<PodSpec, 'containers' | 'initContainers'>> & { os?: { name?: string } };

/** VisitContainers(AllContainers): the sim's pods have no ephemeral containers. */
function allContainers(spec: Spec | undefined): ContainerSpec[] {
  return [...list(spec?.initContainers), ...list(spec?.containers)].filter((c): c is ContainerSpec => c != null);
}

/** A list as given, or none: a malformed one is for the other checks to name. */
const list = (value: unknown): (ContainerSpec | null | undefined)[] => (Array.isArray(value) ? value : []);

/** containerStopSignalsInUse: the old object used the field, so an update keeps it even with the gate off. */
function stopSignalsInUse(spec: Spec | undefined): boolean {
  return allContainers(spec).some((c) => c.lifecycle?.stopSignal != null);
}

/**
 * dropContainerStopSignals, from dropDisabledFields (PrepareForCreate, PrepareForUpdate): with the gate off and
 * the old spec not using it, every container's stopSignal goes, and a lifecycle left empty goes with it. Silent,
 * as the real one is. Returns the containers it was dropped from, so the caller can say so where it wants to.
 */
export function dropContainerStopSignals(spec: Spec, oldSpec: Spec | undefined, gates: FeatureGates): string[] {
  if (gates.enabled('ContainerStopSignals') || stopSignalsInUse(oldSpec)) return [];
  const dropped: string[] = [];
  for (const c of allContainers(spec)) {
    if (!c.lifecycle || c.lifecycle.stopSignal == null) continue;
    delete c.lifecycle.stopSignal;
    dropped.push(c.name);
    if (Object.keys(c.lifecycle).length === 0) delete c.lifecycle;
  }
  return dropped;
}

// validation.go supportedStopSignalsLinux, supportedStopSignalsWindows.
const LINUX_STOP_SIGNALS = [
  ...['SIGABRT', 'SIGALRM', 'SIGBUS', 'SIGCHLD', 'SIGCLD', 'SIGCONT', 'SIGFPE', 'SIGHUP', 'SIGILL', 'SIGINT'],
  ...['SIGIO', 'SIGIOT', 'SIGKILL', 'SIGPIPE', 'SIGPOLL', 'SIGPROF', 'SIGPWR', 'SIGQUIT', 'SIGSEGV', 'SIGSTKFLT'],
  ...['SIGSTOP', 'SIGSYS', 'SIGTERM', 'SIGTRAP', 'SIGTSTP', 'SIGTTIN', 'SIGTTOU', 'SIGURG', 'SIGUSR1', 'SIGUSR2'],
  ...['SIGVTALRM', 'SIGWINCH', 'SIGXCPU', 'SIGXFSZ', 'SIGRTMIN', 'SIGRTMAX'],
  ...Array.from({ length: 15 }, (_, i) => `SIGRTMIN+${i + 1}`),
  ...Array.from({ length: 14 }, (_, i) => `SIGRTMAX-${i + 1}`),
].sort();
const WINDOWS_STOP_SIGNALS = ['SIGKILL', 'SIGTERM'];

/** field.NotSupported's body: the value and every supported one, quoted, in sets.List's (sorted) order. */
const notSupported = (path: string, value: unknown, supported: string[]) =>
  `${path}: Unsupported value: ${JSON.stringify(value)}: supported values: ${supported.map((s) => JSON.stringify(s)).join(', ')}`;

/**
 * validateStopSignal, for each container validateLifecycle reaches (regular ones and restartable init
 * containers): forbidden without spec.os.name; on linux and windows only their signals. The errors as the real
 * field errors print them (the caller joins them as the API server's Invalid status does).
 */
export function validateStopSignals(spec: Spec, specPath = 'spec'): string[] {
  const os = spec.os?.name;
  const errors: string[] = [];
  const check = (c: ContainerSpec | null | undefined, path: string) => {
    const signal = c?.lifecycle?.stopSignal;
    if (signal == null) return;
    const at = `${path}.lifecycle.stopSignal`;
    if (os === undefined || os === null)
      errors.push(`${at}: Forbidden: may not be set for containers with empty \`spec.os.name\``);
    else if (os === 'windows' && !WINDOWS_STOP_SIGNALS.includes(signal))
      errors.push(notSupported(at, signal, WINDOWS_STOP_SIGNALS));
    else if (os === 'linux' && !LINUX_STOP_SIGNALS.includes(signal))
      errors.push(notSupported(at, signal, LINUX_STOP_SIGNALS));
  };
  // ValidatePodSpec: validateContainers, then validateInitContainers.
  for (const [i, c] of list(spec.containers).entries()) check(c, `${specPath}.containers[${i}]`);
  for (const [i, c] of list(spec.initContainers).entries()) check(c, `${specPath}.initContainers[${i}]`);
  return errors;
}

/** The aggregate an Invalid status prints (apimachinery errors.NewInvalid): one error as it is, more in brackets. */
export function aggregate(errors: string[]): string {
  return errors.length === 1 ? errors[0]! : `[${errors.join(', ')}]`;
}
