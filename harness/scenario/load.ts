// Reading scenario files and the pod template: YAML, checked with zod, errors that name the field.
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { parse as parseYaml } from 'yaml';
import { TermlabError } from '../errors.ts';
import { formatIssue } from '../observation.ts';
import { isRolloutFile, RolloutFileSchema, type RolloutScenario } from './rollout.ts';
import { ScenarioFileSchema, type Scenario } from './schema.ts';

export const DEFAULT_SCENARIOS = fileURLToPath(new URL('../../manifests/scenarios.yaml', import.meta.url));
export const DEFAULT_TEMPLATE = fileURLToPath(new URL('../../manifests/lab-pod.yaml', import.meta.url));

async function readYaml(path: string, code: 'SCENARIO_INVALID'): Promise<unknown> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    throw new TermlabError('INPUT_UNREADABLE', `${path}: cannot read: ${(error as Error).message}`, { source: path });
  }
  try {
    return parseYaml(text);
  } catch (error) {
    throw new TermlabError(code, `${path}: not valid YAML: ${(error as Error).message.split('\n')[0]}`, { source: path });
  }
}

export type ScenarioSet = { kind: 'pod'; scenarios: Scenario[] } | { kind: 'rollout'; scenarios: RolloutScenario[] };

function pick<T extends { name: string }>(scenarios: T[], path: string, only?: string[]): T[] {
  if (!only?.length) return scenarios;
  const unknown = only.filter((name) => !scenarios.some((s) => s.name === name));
  if (unknown.length) {
    throw new TermlabError('USAGE', `--only: no scenario named ${unknown.join(', ')} in ${path} (it has ${scenarios.map((s) => s.name).join(', ')})`);
  }
  return scenarios.filter((s) => only.includes(s.name));
}

/** Either kind of scenario file: pod scenarios, or rollouts (every entry `kind: rollout`). */
export async function loadScenarioSet(path: string = DEFAULT_SCENARIOS, only?: string[]): Promise<ScenarioSet> {
  const data = await readYaml(path, 'SCENARIO_INVALID');
  if (isRolloutFile(data)) {
    const result = RolloutFileSchema.safeParse(data);
    if (!result.success) throw new TermlabError('SCENARIO_INVALID', `${path}: ${formatIssue(result.error.issues[0]!)}`, { source: path });
    return { kind: 'rollout', scenarios: pick(result.data.scenarios, path, only) };
  }
  const result = ScenarioFileSchema.safeParse(data);
  if (!result.success) {
    throw new TermlabError('SCENARIO_INVALID', `${path}: ${formatIssue(result.error.issues[0]!)}`, { source: path });
  }
  return { kind: 'pod', scenarios: pick(result.data.scenarios, path, only) };
}

export async function loadScenarios(path: string = DEFAULT_SCENARIOS, only?: string[]): Promise<Scenario[]> {
  const set = await loadScenarioSet(path, only);
  if (set.kind === 'rollout') throw new TermlabError('SCENARIO_INVALID', `${path}: scenarios: rollout scenarios (kind: rollout) are run with \`termlab run --scenarios ${path}\`, not this command`, { source: path });
  return set.scenarios;
}

export async function loadTemplate(path: string = DEFAULT_TEMPLATE): Promise<Record<string, any>> {
  const template = (await readYaml(path, 'SCENARIO_INVALID')) as any;
  const container = template?.spec?.containers?.[0];
  if (template?.kind !== 'Pod' || !container?.name) {
    throw new TermlabError('SCENARIO_INVALID', `${path}: the pod template must be a Pod with at least one container`, { source: path });
  }
  const port = container.ports?.[0]?.containerPort;
  if (typeof port !== 'number') throw new TermlabError('SCENARIO_INVALID', `${path}: spec.containers[0].ports[0].containerPort: the lab server's port is required`, { source: path });
  return template;
}
