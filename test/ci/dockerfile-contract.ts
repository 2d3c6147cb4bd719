// What an image promises a pod, read from a Dockerfile's lab stage with a real Dockerfile parser
// (dockerfile-ast, the parser of the Docker language server) or from the CI node's build plan.
// Both sides reduce to the same shape, so the recipe test can compare them field by field.
import { Copy, DockerfileParser, type Entrypoint, type Env, From, type Instruction } from 'dockerfile-ast';
import type { LabImagePlan } from '../../dev/node/images.ts';

export interface ImageContract {
  /** Repository sources the image holds, sorted. */
  sources: string[];
  /** The repository source PID 1 runs. */
  entrySource: string;
  /** The repository source behind the hook program at `hookPath`. */
  hookSource: string;
  hookPath: string;
  user: string;
  workingDir: string;
  env: string[];
  exposedPorts: string[];
  stopSignal: string;
}

export interface DockerfileStage {
  from: From;
  instructions: Instruction[];
}

export function dockerfileStages(text: string): DockerfileStage[] {
  const stages: DockerfileStage[] = [];
  for (const instruction of DockerfileParser.parse(text).getInstructions()) {
    if (instruction instanceof From) stages.push({ from: instruction, instructions: [] });
    else stages[stages.length - 1]?.instructions.push(instruction);
  }
  return stages;
}

function one<T extends Instruction>(stage: DockerfileStage, keyword: string): T {
  const found = stage.instructions.filter((instruction) => instruction.getKeyword() === keyword);
  if (found.length !== 1) throw new Error(`the lab stage has ${found.length} ${keyword} instructions, expected 1`);
  return found[0] as T;
}

function words(instruction: Instruction): string[] {
  return instruction.getArguments().map((argument) => argument.getValue());
}

/** The Dockerfile's contract, given the directory its sources land in (the recipe's appDir). */
export function dockerfileContract(stage: DockerfileStage, appDir: string): ImageContract {
  const inApp = (path: string) => (path.startsWith(`${appDir}/`) ? path.slice(appDir.length + 1) : null);
  const copies = stage.instructions.filter((instruction): instruction is Copy => instruction instanceof Copy);
  const sources: string[] = [];
  let hook: { source: string; path: string } | null = null;
  for (const copy of copies) {
    const [destination, ...from] = words(copy).reverse();
    if (destination === `${appDir}/server/`) sources.push(...from);
    else if (from.length === 1 && destination) hook = { source: from[0]!, path: destination };
  }
  for (const run of stage.instructions.filter((instruction) => instruction.getKeyword() === 'RUN')) {
    // A TypeScript hook: a shim written to the hook's path that execs node on a copied source.
    const shim = /exec node (\S+) .*> (\S+)/.exec(run.getArgumentsContent() ?? '');
    const source = shim && inApp(shim[1]!);
    if (shim && source) hook = { source, path: shim[2]! };
  }
  if (!hook) throw new Error('the lab stage installs no hook program');
  const entry = one<Entrypoint>(stage, 'ENTRYPOINT')
    .getJSONStrings()
    .map((part) => part.getJSONValue());
  if (entry.length !== 2 || entry[0] !== 'node')
    throw new Error(`ENTRYPOINT ${JSON.stringify(entry)} is not ["node", <source>]`);
  const entrySource = inApp(entry[1]!);
  if (!entrySource) throw new Error(`ENTRYPOINT runs ${entry[1]}, which is not under ${appDir}`);
  return {
    sources: [...new Set(sources)].sort(),
    entrySource,
    hookSource: hook.source,
    hookPath: hook.path,
    user: words(one(stage, 'USER')).join(' '),
    workingDir: words(one(stage, 'WORKDIR')).join(' '),
    env: one<Env>(stage, 'ENV')
      .getProperties()
      .map((property) => `${property.getName()}=${property.getValue() ?? ''}`),
    exposedPorts: words(one(stage, 'EXPOSE')).map((port) => (port.includes('/') ? port : `${port}/tcp`)),
    stopSignal: words(one(stage, 'STOPSIGNAL')).join(' '),
  };
}

/** The CI node's contract, given the sources each bundled program was built from (from esbuild's metafile). */
export function nodePlanContract(
  plan: LabImagePlan,
  hookPath: string,
  bundleInputs: Map<string, string[]>,
): ImageContract {
  const programAt = (target: string) => {
    const program = plan.programs.find((candidate) => candidate.target === target);
    if (!program) throw new Error(`the node plan installs nothing at ${target}`);
    return program;
  };
  const entry = programAt(plan.config.entrypoint[1] ?? '');
  const hook = programAt(hookPath);
  const sources = plan.programs.flatMap((program) => (program.bundle ? (bundleInputs.get(program.source) ?? []) : []));
  return {
    sources: [...new Set(sources)].sort(),
    entrySource: entry.source,
    hookSource: hook.source,
    hookPath: hook.target,
    user: plan.config.user,
    workingDir: plan.config.workingDir,
    env: plan.config.env,
    exposedPorts: plan.config.exposedPorts,
    stopSignal: plan.config.stopSignal,
  };
}
