// Reading scenario files and the pod template: YAML, checked with zod, errors that name the field.
import { readFile } from 'node:fs/promises';
import { TermlabError } from '../../lib/errors.ts';
import { parseYamlText } from '../../lib/yaml-text.ts';
import { formatIssue } from '../../lib/files.ts';
import { oneLine } from '../../lib/terminal.ts';
import { isRolloutFile, RolloutFileSchema, type RolloutScenario } from './rollout.ts';
import { EdgeFileSchema, type EdgeScenario, isEdgeFile } from './edge.ts';
import { nearest } from '../../lib/suggest.ts';
import { packagePath } from '../../lib/package-root.ts';
import { FileScenarioSchema, PreStopSchema, RETRY_FIELDS, ScenarioFileSchema, type Scenario } from './schema.ts';

export const DEFAULT_SCENARIOS = packagePath('manifests/scenarios.yaml');
const DEFAULT_TEMPLATE = packagePath('manifests/lab-pod.yaml');

interface YamlFile {
  data: unknown;
  /** The 1-based line where the node at this path starts, when the file has it. */
  lineOf(path: readonly PropertyKey[]): number | null;
}

async function readYaml(path: string, code: 'SCENARIO_INVALID'): Promise<YamlFile> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    throw new TermlabError('INPUT_UNREADABLE', `${path}: cannot read: ${(error as Error).message}`, { source: path });
  }
  const { doc, lineCounter, data } = parseYamlText(text, path, code);
  return {
    data,
    lineOf(at) {
      // The deepest node the path reaches: a missing field points at its scenario.
      for (let depth = at.length; depth >= 0; depth--) {
        const node = doc.getIn(at.slice(0, depth) as unknown[], true) as
          | { range?: [number, number, number] }
          | undefined;
        if (node?.range) return lineCounter.linePos(node.range[0]).line;
      }
      return null;
    },
  };
}

const SCENARIO_FIELDS = Object.keys(FileScenarioSchema.shape);
const PRESTOP_FIELDS = [...new Set(PreStopSchema.options.flatMap((o) => Object.keys(o.shape)))];

/** Where an issue is, as a person finds it: the scenario by its name, and the file's line. */
function place(file: YamlFile, at: readonly PropertyKey[]): string {
  const index = at[0] === 'scenarios' && typeof at[1] === 'number' ? at[1] : null;
  const entry = index === null ? undefined : (file.data as { scenarios?: unknown[] }).scenarios?.[index];
  const name =
    entry && typeof entry === 'object' && typeof (entry as { name?: unknown }).name === 'string'
      ? (entry as { name: string }).name
      : null;
  const line = file.lineOf(at);
  const who = index === null ? '' : name ? `scenario ${JSON.stringify(name)}` : `scenario ${index + 1} (no name)`;
  const field = at
    .slice(index === null ? 0 : 2)
    .map(String)
    .join('.');
  return [who, field].filter(Boolean).join(': ') + (line === null ? '' : ` (line ${line})`);
}

/** A field the schema does not know is a mistake to name, never a setting silently ignored. */
function unknownField(file: YamlFile, path: string): TermlabError | null {
  const scenarios = (file.data as { scenarios?: unknown }).scenarios;
  if (!Array.isArray(scenarios)) return null;
  for (const [i, entry] of scenarios.entries()) {
    if (!entry || typeof entry !== 'object') continue;
    // [where, the object, its known keys, the field's kind]: "`x` is not a retry field (the retry fields: …)".
    const checks: [readonly PropertyKey[], object, string[], string][] = [
      [['scenarios', i], entry, SCENARIO_FIELDS, 'scenario'],
    ];
    const preStop = (entry as { preStop?: unknown }).preStop;
    if (preStop && typeof preStop === 'object')
      checks.push([['scenarios', i, 'preStop'], preStop, PRESTOP_FIELDS, 'preStop']);
    const retry = (entry as { retry?: unknown }).retry;
    if (retry && typeof retry === 'object' && !Array.isArray(retry))
      checks.push([['scenarios', i, 'retry'], retry, RETRY_FIELDS, 'retry']);
    for (const [at, object, known, what] of checks) {
      for (const key of Object.keys(object)) {
        if (known.includes(key)) continue;
        const near = nearest(key, known);
        return new TermlabError(
          'SCENARIO_INVALID',
          `${path}: ${place(file, [...at, key])}: \`${key}\` is not a ${what} field${near ? `; did you mean \`${near}\`?` : ` (the ${what} fields: ${known.join(', ')})`}`,
          { source: path },
        );
      }
    }
  }
  return null;
}

export type ScenarioSet =
  | { kind: 'pod'; scenarios: Scenario[] }
  | { kind: 'rollout'; scenarios: RolloutScenario[] }
  | { kind: 'edge'; scenarios: EdgeScenario[] };

function pick<T extends { name: string }>(scenarios: T[], path: string, only?: string[]): T[] {
  if (!only?.length) return scenarios;
  const unknown = only.filter((name) => !scenarios.some((s) => s.name === name));
  if (unknown.length) {
    throw new TermlabError(
      'USAGE',
      `--only: no scenario named ${unknown.join(', ')} in ${path} (it has ${scenarios.map((s) => s.name).join(', ')})`,
    );
  }
  return scenarios.filter((s) => only.includes(s.name));
}

/** Any kind of scenario file: pod scenarios, rollouts (entries `kind: rollout`) or edge scenarios (`kind: edge`). */
export async function loadScenarioSet(path: string = DEFAULT_SCENARIOS, only?: string[]): Promise<ScenarioSet> {
  const file = await readYaml(path, 'SCENARIO_INVALID');
  const data = file.data;
  if (isRolloutFile(data)) {
    const result = RolloutFileSchema.safeParse(data);
    if (!result.success)
      throw new TermlabError('SCENARIO_INVALID', `${path}: ${formatIssue(result.error.issues[0]!)}`, { source: path });
    return { kind: 'rollout', scenarios: pick(result.data.scenarios, path, only) };
  }
  if (isEdgeFile(data)) {
    const result = EdgeFileSchema.safeParse(data);
    if (!result.success) {
      const issue = result.error.issues[0]!;
      throw new TermlabError('SCENARIO_INVALID', `${path}: ${place(file, issue.path)}: ${oneLine(issue.message)}`, {
        source: path,
      });
    }
    return { kind: 'edge', scenarios: pick(result.data.scenarios, path, only) };
  }
  const stray = unknownField(file, path);
  if (stray) throw stray;
  const result = ScenarioFileSchema.safeParse(data);
  if (!result.success) {
    const issue = result.error.issues[0]!;
    const where =
      issue.path[0] === 'scenarios' && typeof issue.path[1] === 'number'
        ? `${place(file, issue.path)}: ${oneLine(issue.message)}`
        : formatIssue(issue);
    throw new TermlabError('SCENARIO_INVALID', `${path}: ${where}`, { source: path });
  }
  return { kind: 'pod', scenarios: pick(result.data.scenarios, path, only) };
}

/** The scenario names of `--only a,b` (spaces trimmed, empty names dropped); undefined without --only: every scenario. */
export function onlyNames(only: string | undefined): string[] | undefined {
  return only
    ?.split(',')
    .map((s) => s.trim())
    .filter(Boolean);
}

export async function loadScenarios(path: string = DEFAULT_SCENARIOS, only?: string[]): Promise<Scenario[]> {
  const set = await loadScenarioSet(path, only);
  if (set.kind !== 'pod')
    throw new TermlabError(
      'SCENARIO_INVALID',
      `${path}: scenarios: ${set.kind} scenarios (kind: ${set.kind}) are run with \`termlab run --scenarios ${path}\`, not this command`,
      { source: path },
    );
  return set.scenarios;
}

export async function loadTemplate(path: string = DEFAULT_TEMPLATE): Promise<Record<string, any>> {
  const template = (await readYaml(path, 'SCENARIO_INVALID')).data as any;
  const container = template?.spec?.containers?.[0];
  if (template?.kind !== 'Pod' || !container?.name) {
    throw new TermlabError('SCENARIO_INVALID', `${path}: the pod template must be a Pod with at least one container`, {
      source: path,
    });
  }
  const port = container.ports?.[0]?.containerPort;
  if (typeof port !== 'number')
    throw new TermlabError(
      'SCENARIO_INVALID',
      `${path}: spec.containers[0].ports[0].containerPort: the lab server's port is required`,
      { source: path },
    );
  return template;
}
