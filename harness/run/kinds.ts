// The two kinds of scenario a run runs, each one object: how long one may take, how many pods it
// holds at once, how it runs (plan → execute → finish, in scenario.ts and rollout.ts), how its
// observation is written, and whether a try whose request the harness lost runs again.
import type { Observation } from '../observation/schema.ts';
import type { RolloutObservation } from '../observation/rollout.ts';
import { writeAnyObservation } from '../observation/write.ts';
import type { ScenarioSet } from '../scenario/load.ts';
import { type RolloutScenario, rolloutDeadlineSeconds } from '../scenario/rollout.ts';
import type { Scenario } from '../scenario/schema.ts';
import { podDeadlineSeconds } from '../safety/deadline.ts';
import { runRollout } from './rollout.ts';
import { runEdge } from './edge.ts';
import { asRollout, type EdgeScenario } from '../scenario/edge.ts';
import type { EdgeObservation } from '../observation/edge.ts';
import { runScenario, type ScenarioContext } from './scenario.ts';

export interface ScenarioKind<S extends { name: string }, O> {
  kind: ScenarioSet['kind'];
  deadlineSeconds(s: S): number;
  /** How many run at once when --parallel is not given. */
  defaultParallel: number;
  /** The most pods the run holds at once, for the pod cap. */
  podsAtOnce(scenarios: readonly S[], parallel: number): number;
  /** How its traffic reaches the lab, for the run's opening lines. */
  describeTraffic(transport: string): string;
  run(ctx: ScenarioContext, s: S): Promise<O>;
  /** Written through its own schema and within the readers' size limit (observation/write.ts). */
  write(path: string, o: O): Promise<void>;
  /** A try that did not count (grade/attempts.ts retryCause) runs again on a fresh pod. */
  runsTriesAgain: boolean;
  /** The lab pair a scenario belongs to, if any. */
  pairOf(s: S): string | null;
  /** Whether the run's sweep also deletes Deployments and Services (a retry scenario makes two Services). */
  sweepsWorkloads(scenarios: readonly S[]): boolean;
}

export const podsOfScenario = (s: Scenario): number => (s.retry ? 3 : 1);

export const POD_SCENARIOS: ScenarioKind<Scenario, Observation> = {
  kind: 'pod',
  deadlineSeconds: podDeadlineSeconds,
  defaultParallel: 8,
  // A retry scenario holds three: the deleted pod, its standby replica and the ledger.
  podsAtOnce: (scenarios, parallel) =>
    scenarios
      .map(podsOfScenario)
      .sort((a, b) => b - a)
      .slice(0, parallel)
      .reduce((sum, n) => sum + n, 0),
  describeTraffic: (transport) => `over ${transport}`,
  run: runScenario,
  write: writeAnyObservation,
  runsTriesAgain: true,
  pairOf: (s) => s.labPair?.id ?? null,
  sweepsWorkloads: (scenarios) => scenarios.some((s) => s.retry),
};

export const ROLLOUT_SCENARIOS: ScenarioKind<RolloutScenario, RolloutObservation> = {
  kind: 'rollout',
  deadlineSeconds: rolloutDeadlineSeconds,
  // Rollouts run one at a time by default: their timing under load is the lesson.
  defaultParallel: 1,
  // A rollout's worst moment: every old pod still terminating beside all the new ones, and the load pod.
  podsAtOnce: (scenarios, parallel) =>
    Math.max(...scenarios.map((r) => 2 * r.replicas + 1)) * Math.min(parallel, scenarios.length),
  describeTraffic: () => 'load from a pod through each Service',
  run: runRollout,
  write: writeAnyObservation,
  runsTriesAgain: false,
  pairOf: () => null,
  sweepsWorkloads: () => true,
};

export const EDGE_SCENARIOS: ScenarioKind<EdgeScenario, EdgeObservation> = {
  ...(ROLLOUT_SCENARIOS as unknown as Omit<ScenarioKind<EdgeScenario, EdgeObservation>, 'kind'>),
  kind: 'edge',
  deadlineSeconds: (s) => rolloutDeadlineSeconds(asRollout(s)),
  podsAtOnce: (scenarios, parallel) => ROLLOUT_SCENARIOS.podsAtOnce(scenarios.map(asRollout), parallel),
  describeTraffic: () => "load from a pod through the edge (Traefik's Gateway or Ingress), kept alive",
  run: runEdge,
  pairOf: (s) => s.labPair?.id ?? null,
};
