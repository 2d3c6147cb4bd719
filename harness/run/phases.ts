// What every kind of scenario run shares: its run record, and the frame its phases run in — a
// failure recorded in the run (its own code kept for the exit code), never thrown; the cleaner
// always run, newest first; a run whose cleanup failed never called complete.
import { TermlabError } from '../../lib/errors.ts';
import type { Observation } from '../observation/schema.ts';
import type { Cleaner } from './cleaner.ts';
import type { ScenarioContext } from './scenario.ts';

type CommonPhase = 'creating' | 'cleaning up' | 'done' | 'failed';
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

/** The run record an observation starts with: incomplete until its phases say otherwise. */
export function newRun(
  ctx: ScenarioContext,
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
  /** After cleanup: let the watches settle and stop them. */
  afterCleanup?(): Promise<void>;
}

/** Runs a kind's phases in the shared frame; returns the cleanup record. */
export async function runPhases<P extends Phase>(
  ctx: ScenarioContext,
  run: Observation['run'],
  cleaner: Cleaner,
  phases: (phaseContext: ScenarioContext<P>) => Promise<void>,
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
      ? `interrupted (Ctrl-C) while ${phase}`
      : error instanceof Error
        ? error.message
        : String(error);
    if (error instanceof TermlabError && !ctx.signal.aborted) ctx.onFailure?.(error);
    await hooks.onError?.(error);
  } finally {
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
