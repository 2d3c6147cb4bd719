// The grader's check of a stopSignal scenario, apart from stop-signal.ts, which the model (theory.ts) imports.
import type { Facts } from './facts.ts';
import { describeLine } from './sources.ts';
import type { StopSignalPlan } from './stop-signal.ts';
import { type Check, fail, pass } from './types.ts';

/**
 * attribution.stop-signal: what the cluster did with the scenario's stopSignal, held against the signal the lab
 * server logged first. A pod that kept the field but whose server got SIGTERM points at the kubelet's own gate or a
 * runtime that does not pass the signal (containerd tracks it in #11617), never at the app.
 */
export function stopSignalCheck(f: Facts, plan: StopSignalPlan | null): Check[] {
  if (!plan) return [];
  const id = 'attribution.stop-signal';
  const got = f.lab.find((l) => l.event === 'signal');
  const logged = got?.fields.signal;
  if (typeof logged !== 'string') return [pass(id, `${plan.note} (the server logged no signal to hold it against)`)];
  if (logged === plan.sent) return [pass(id, `${plan.note}; the server got ${logged} (${describeLine(got!)})`)];
  return [
    fail(
      id,
      plan.delivered
        ? `the live pod kept lifecycle.stopSignal ${plan.sent}, but the server got ${logged} (${describeLine(got!)}): the kubelet's own ContainerStopSignals gate is off, or the runtime did not pass the signal (containerd #11617)`
        : `${plan.note}, but the server got ${logged} (${describeLine(got!)}): not what a pod without the field is sent`,
    ),
  ];
}
