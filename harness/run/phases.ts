// What every kind of run on a cluster shares (a scenario, a rollout, a verification): its run record,
// and the frame its phases run in — a failure recorded in the run (its own code kept for the exit
// code), never thrown; the cleaner always run, newest first; a run whose cleanup failed never called complete.
import { interruptedWords, TermlabError } from '../../lib/errors.ts';
import type { Cluster } from '../kube/index.ts';
import type { Observation, SealedPredictions } from '../observation/schema.ts';
import type { Cleaner } from './cleaner.ts';
import type { RunClock } from './clock.ts';

export type CommonPhase = 'creating' | 'cleaning up' | 'done' | 'failed';
export type PodPhase =
  | CommonPhase
  | 'waiting for Ready'
  | 'request in flight'
  | 'deleting'
  | 'terminating'
  | 'collecting';
export type RolloutPhase = CommonPhase | 'waiting for available' | 'load starting' | 'rolling out' | 'load finishing';
/** A phase of either kind, as the progress line shows it. */
export type Phase = PodPhase | RolloutPhase;

/** The run's own list of pods created and not yet seen gone: what is left if the API never returns. */
export interface PodTracker {
  created(name: string): void;
  gone(name: string): void;
}

/** What every run against a cluster is given, a scenario's and a verification's alike. */
export interface ClusterRunContext {
  cluster: Cluster;
  runId: string;
  owner: string;
  /** The caller's full name as the cluster reported it: the pods' termlab.io/identity annotation. */
  identity?: string;
  harnessVersion: string;
  simulated: boolean;
  template: Record<string, any>;
  clock: RunClock;
  signal: AbortSignal;
  readyTimeoutMs: number;
}

export interface ScenarioContext<P extends string = Phase> extends ClusterRunContext {
  namespace: string;
  image?: string;
  env?: string;
  transport: 'portforward' | 'direct';
  /** Which try of the scenario this is (from 1); a retry gets a fresh pod of its own name. */
  attempt?: number;
  /** How long a pod may wait for room in a full ResourceQuota (--quota-wait). */
  quotaWaitMs?: number;
  /** The predictions sealed before the first pod: copied into every observation. */
  predictions?: SealedPredictions;
  pods?: PodTracker;
  onPhase(phase: P, detail?: string): void;
  /** A failure that ended the scenario early, with its own code: the run's exit code follows from it. */
  onFailure?(error: TermlabError): void;
  /** Something the cluster did that the user must hear of at once (a field it dropped from the pod). */
  onNote?(text: string): void;
}

/** What the frame needs of a run's context: its clock and signal, and where its phases and failures go. */
export interface FrameContext<P extends string> {
  clock: RunClock;
  signal: AbortSignal;
  onPhase(phase: P, detail?: string): void;
  /** A failure that ended the run early, with its own code: the run's exit code follows from it. */
  onFailure?(error: TermlabError): void;
}

/** The run record an observation starts with: incomplete until its phases say otherwise. */
export function newRun(
  ctx: ClusterRunContext,
  transport: Observation['run']['transport'],
  extra: Partial<Observation['run']> = {},
): Observation['run'] {
  const { cluster } = ctx;
  return {
    runId: ctx.runId,
    ownerId: ctx.owner,
    harnessVersion: ctx.harnessVersion,
    observedAt: ctx.clock.now().wall,
    complete: false,
    cluster: {
      context: cluster.context,
      server: cluster.server,
      serverVersion: cluster.serverVersion,
      nodeName: null,
      containerRuntime: null,
      simulated: ctx.simulated,
    },
    transport,
    ...extra,
  };
}

export interface PhaseHooks {
  /** After a failure, before cleanup: evidence of the failure (the pod's events). */
  onError?(error: unknown): Promise<void>;
  /** After the phases, whichever way they ended, before cleanup: stop what only the phases needed (log follows). */
  beforeCleanup?(): void;
  /** After cleanup: let the watches settle and stop them. */
  afterCleanup?(): Promise<void>;
}

/**
 * Runs a kind's phases in the shared frame; returns the cleanup record. `P` names the kind's phases;
 * `C` is its context (a scenario's unless said), handed to the phases with `onPhase` kept track of.
 */
export async function runPhases<
  P extends string,
  C extends FrameContext<P | CommonPhase> = ScenarioContext<P | CommonPhase>,
>(
  ctx: C,
  run: Observation['run'],
  cleaner: Cleaner,
  phases: (phaseContext: C) => Promise<void>,
  hooks: PhaseHooks = {},
): Promise<Observation['cleanup']> {
  let phase: P | 'creating' = 'creating';
  const onPhase = (next: P | CommonPhase, detail?: string) => {
    phase = next as P;
    ctx.onPhase(next, detail);
  };
  let cleanup: Observation['cleanup'] = [];
  try {
    onPhase('creating');
    await phases({ ...ctx, onPhase });
    run.complete = true;
  } catch (error) {
    run.incompleteReason = ctx.signal.aborted
      ? `${interruptedWords(ctx.signal)} while ${phase}`
      : error instanceof Error
        ? error.message
        : String(error);
    if (error instanceof TermlabError && !ctx.signal.aborted) ctx.onFailure?.(error);
    await hooks.onError?.(error);
  } finally {
    hooks.beforeCleanup?.();
    onPhase('cleaning up');
    cleanup = await cleaner.run();
    await hooks.afterCleanup?.();
    // Complete means the evidence is whole and everything the run made is gone.
    if (run.complete && cleanup.some((c) => !c.ok)) {
      run.complete = false;
      run.incompleteReason = `cleanup failed: ${cleanup
        .filter((c) => !c.ok)
        .map((c) => `${c.action}: ${c.error}`)
        .join('; ')}`;
    }
    run.observedAt = ctx.clock.now().wall;
  }
  onPhase(run.complete ? 'done' : 'failed', run.incompleteReason);
  return cleanup;
}
