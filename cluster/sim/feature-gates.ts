// The feature gates the simulator models, per minor, as each release's pkg/features/kube_features.go has them
// (the spec in force at that version), and `--feature-gates` parsed as the kubelet and the API server parse it
// (component-base featuregate/feature_gate.go SetWithLogger, unsafeSetFromMap). One value per gate for the
// whole simulated cluster: the API server and the kubelet take the same flag here.
import { TermlabError } from '../../lib/errors.ts';

export type GateName =
  | 'ContainerStopSignals'
  | 'PLEGOnDemandRelist'
  | 'SidecarContainers'
  | 'PodLifecycleSleepAction'
  | 'PodLifecycleSleepActionAllowZero';

interface GateSpec {
  default: boolean;
  preRelease: 'Alpha' | 'Beta' | 'GA';
  /** LockToDefault: setting the other value is refused. */
  locked?: boolean;
}

const ALPHA_OFF: GateSpec = { default: false, preRelease: 'Alpha' };
const GA_LOCKED: GateSpec = { default: true, preRelease: 'GA', locked: true };

/**
 * The gates of each minor that touch what the sim does (a gate absent from a minor is not known there: naming it
 * is an error, as in the real one). Read in kube_features.go of v1.34.4, v1.35.4, v1.36.3, v1.37.2, v1.38.0-beta.0:
 * - ContainerStopSignals (lifecycle.stopSignal, KEP-4960): alpha and off since 1.33, in every one of them; its
 *   beta did not land in v1.38.0-beta.0 (kube_features.go:1328-1330 there).
 * - PLEGOnDemandRelist: none in 1.34/1.35; beta and on in 1.36; GA and locked on from 1.37 ("remove in v1.40").
 * - SidecarContainers (GA 1.33), PodLifecycleSleepAction and ...AllowZero (GA 1.34): locked on, removed in 1.37.
 */
const GATES_BY_MINOR: ReadonlyMap<string, Partial<Record<GateName, GateSpec>>> = new Map([
  [
    '1.34',
    {
      ContainerStopSignals: ALPHA_OFF,
      SidecarContainers: GA_LOCKED,
      PodLifecycleSleepAction: GA_LOCKED,
      PodLifecycleSleepActionAllowZero: GA_LOCKED,
    },
  ],
  [
    '1.35',
    {
      ContainerStopSignals: ALPHA_OFF,
      SidecarContainers: GA_LOCKED,
      PodLifecycleSleepAction: GA_LOCKED,
      PodLifecycleSleepActionAllowZero: GA_LOCKED,
    },
  ],
  [
    '1.36',
    {
      ContainerStopSignals: ALPHA_OFF,
      PLEGOnDemandRelist: { default: true, preRelease: 'Beta' },
      SidecarContainers: GA_LOCKED,
      PodLifecycleSleepAction: GA_LOCKED,
      PodLifecycleSleepActionAllowZero: GA_LOCKED,
    },
  ],
  ['1.37', { ContainerStopSignals: ALPHA_OFF, PLEGOnDemandRelist: GA_LOCKED }],
  ['1.38', { ContainerStopSignals: ALPHA_OFF, PLEGOnDemandRelist: GA_LOCKED }],
]);

/** The gates known in a minor, in the order the error names them. */
export function knownGates(minor: string): GateName[] {
  return Object.keys(GATES_BY_MINOR.get(minor) ?? {}).sort() as GateName[];
}

/** The gates in force on one simulated cluster: each minor's defaults, with what --feature-gates set. */
export class FeatureGates {
  readonly minor: string;
  private readonly specs: Partial<Record<GateName, GateSpec>>;
  private readonly set: ReadonlyMap<GateName, boolean>;

  constructor(minor: string, set: ReadonlyMap<GateName, boolean> = new Map()) {
    const specs = GATES_BY_MINOR.get(minor);
    if (!specs) throw new Error(`no feature gates are written down for minor ${minor}`);
    this.minor = minor;
    this.specs = specs;
    this.set = set;
  }

  /** A gate the minor does not know is off, as the code that checks it does not exist there. */
  enabled(name: GateName): boolean {
    return this.set.get(name) ?? this.specs[name]?.default ?? false;
  }

  /** "alpha in 1.37, off by default" or "set to false by --feature-gates": why a gate is as it is, for messages. */
  why(name: GateName): string {
    const spec = this.specs[name];
    if (this.set.has(name)) return `set to ${this.set.get(name)} by --feature-gates`;
    if (!spec) return `not in ${this.minor}`;
    return `${spec.preRelease.toLowerCase()} in ${this.minor}, ${spec.default ? 'on' : 'off'} by default`;
  }

  /** What was set, as the flag would say it (for the start-up line). */
  describe(): string {
    return [...this.set].map(([name, value]) => `${name}=${value}`).join(',');
  }
}

const usage = (message: string) =>
  new TermlabError('USAGE', `--feature-gates: ${message}`, { flag: '--feature-gates' });

/** Go's strconv.ParseBool. */
function parseBool(text: string): boolean | undefined {
  if (['1', 't', 'T', 'TRUE', 'true', 'True'].includes(text)) return true;
  if (['0', 'f', 'F', 'FALSE', 'false', 'False'].includes(text)) return false;
  return undefined;
}

/**
 * `Name=bool,Name=bool` for a minor, with the real one's errors: "missing bool value for X", "invalid value of
 * X=v, err: ...", "unrecognized feature gate: X" (here with the gates the sim knows in that minor), and
 * "cannot set feature gate X to v, feature is locked to d".
 */
export function parseFeatureGates(text: string | undefined, minor: string): FeatureGates {
  const specs = GATES_BY_MINOR.get(minor) ?? {};
  const set = new Map<GateName, boolean>();
  for (const item of (text ?? '').split(',')) {
    if (item.length === 0) continue;
    const equals = item.indexOf('=');
    const key = (equals < 0 ? item : item.slice(0, equals)).trim();
    if (equals < 0) throw usage(`missing bool value for ${key}`);
    const raw = item.slice(equals + 1).trim();
    const value = parseBool(raw);
    if (value === undefined)
      throw usage(
        `invalid value of ${key}=${raw}, err: strconv.ParseBool: parsing ${JSON.stringify(raw)}: invalid syntax`,
      );
    if (!Object.hasOwn(specs, key))
      throw usage(
        `unrecognized feature gate: ${key} (the simulated cluster's ${minor} knows ${knownGates(minor).join(', ')})`,
      );
    const spec = specs[key as GateName]!;
    if (spec.locked && spec.default !== value)
      throw usage(`cannot set feature gate ${key} to ${value}, feature is locked to ${spec.default}`);
    set.set(key as GateName, value);
  }
  return new FeatureGates(minor, set);
}
