// Renders the lab stage of server/Dockerfile from the image recipe (server/image.ts).
//   npm run image:dockerfile            rewrite the lab stage in server/Dockerfile
// Other stages in the file are kept. The lab stage is the last one: `docker build` without
// --target builds the last stage, so the lab image stays the default.
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { hookIsShellScript, imageReference, LAB_IMAGE, pathInImage, type LabImageRecipe } from './image.ts';

export const LAB_STAGE = 'lab';
export const DOCKERFILE = fileURLToPath(new URL('./Dockerfile', import.meta.url));

function hookInstall(recipe: LabImageRecipe): string[] {
  if (hookIsShellScript(recipe)) return [`COPY --chmod=0755 ${recipe.hookProgram} ${recipe.hookPath}`];
  // A TypeScript hook runs through Node; the shim keeps the hook's path free of an extension.
  const shim = `#!/bin/sh\\nexec node ${pathInImage(recipe, recipe.hookProgram)} "$@"\\n`;
  return [`RUN printf '${shim}' > ${recipe.hookPath} && chmod 0755 ${recipe.hookPath}`];
}

export function renderLabStage(recipe: LabImageRecipe = LAB_IMAGE): string {
  const copied = hookIsShellScript(recipe) ? recipe.sources : [...recipe.sources, recipe.hookProgram];
  const env = Object.entries(recipe.env)
    .map(([name, value]) => `${name}=${value}`)
    .join(' ');
  return [
    `# The lab server image, rendered from server/image.ts by \`npm run image:dockerfile\`: edit the recipe, not this stage.`,
    `#   docker build -f server/Dockerfile --target ${LAB_STAGE} -t ${imageReference(recipe)} .`,
    `# Nothing is fetched at build or run time but the base image: the server has no npm dependencies.`,
    `FROM ${recipe.baseImage} AS ${LAB_STAGE}`,
    `WORKDIR ${recipe.appDir}`,
    `RUN echo '{"type":"module"}' > ${recipe.appDir}/package.json`,
    `COPY ${copied.join(' ')} ${recipe.appDir}/server/`,
    `# The exec preStop hook: \`lab-hook sleep <ms>\` logs hook-start/hook-end to PID 1's stdout.`,
    ...hookInstall(recipe),
    `USER ${recipe.user}`,
    `ENV ${env}`,
    `EXPOSE ${recipe.port}`,
    `STOPSIGNAL ${recipe.stopSignal}`,
    `# node itself is PID 1 (no npm, no shell) so the stop signal reaches the server's handler.`,
    `ENTRYPOINT ["node", "${pathInImage(recipe, recipe.entryPoint)}"]`,
    '',
  ].join('\n');
}

/** The file's stages as text blocks, each starting at its FROM line (comments above it belong to it). */
export function splitStages(text: string): string[] {
  const lines = text.split('\n');
  const stages: string[][] = [[]];
  let pendingComments: string[] = [];
  for (const line of lines) {
    if (/^\s*FROM\s/i.test(line)) {
      stages.push([...pendingComments, line]);
      pendingComments = [];
    } else if (/^\s*#/.test(line) || line.trim() === '') {
      pendingComments.push(line);
    } else {
      stages[stages.length - 1]!.push(...pendingComments, line);
      pendingComments = [];
    }
  }
  stages[stages.length - 1]!.push(...pendingComments);
  return stages.map((stage) => stage.join('\n')).filter((stage) => stage.trim() !== '');
}

function isLabStage(stage: string): boolean {
  return new RegExp(`^\\s*FROM\\s+\\S+\\s+AS\\s+${LAB_STAGE}\\s*$`, 'im').test(stage);
}

/** The Dockerfile with its lab stage replaced by the rendered one and moved to the end. */
export function withRenderedLabStage(text: string, recipe: LabImageRecipe = LAB_IMAGE): string {
  const others = splitStages(text).filter((stage) => !isLabStage(stage));
  return [...others.map((stage) => stage.trim() + '\n'), renderLabStage(recipe)].join('\n');
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const next = withRenderedLabStage(readFileSync(DOCKERFILE, 'utf8'));
  writeFileSync(`${DOCKERFILE}.tmp`, next);
  renameSync(`${DOCKERFILE}.tmp`, DOCKERFILE);
  process.stdout.write(`wrote ${DOCKERFILE}\n`);
}
