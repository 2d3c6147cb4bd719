// One recipe, two builders: server/Dockerfile (kind, any registry) and the CI node's umoci image
// must hold the same programs with the same configuration, both taken from server/image.ts.
import { readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { build } from 'esbuild';
import { validate } from 'dockerfile-utils';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { LAB_IMAGE as NODE_LAB_IMAGE } from '../../dev/node/configs.ts';
import { bundleOptions, labImagePlan, umociConfigArgs } from '../../dev/node/images.ts';
import { REPO } from '../../dev/node/layout.ts';
import { HOOK_PROGRAM } from '../../server/contract.ts';
import { DOCKERFILE, LAB_STAGE, renderLabStage, splitStages, withRenderedLabStage } from '../../server/dockerfile.ts';
import { imageReference, LAB_IMAGE, type LabImageRecipe } from '../../server/image.ts';
import { dockerfileContract, dockerfileStages, nodePlanContract, type ImageContract } from './dockerfile-contract.ts';

const REGENERATE = 'run `npm run image:dockerfile` after changing server/image.ts';
const DIGEST = /^sha256:[0-9a-f]{64}$/;

function labStageOf(text: string) {
  const stage = dockerfileStages(text).find((candidate) => candidate.from.getBuildStage() === LAB_STAGE);
  if (!stage) throw new Error(`no stage named ${LAB_STAGE}`);
  return stage;
}

/** The repository sources esbuild reads for each bundled program of the node's plan. */
async function nodeContract(recipe: LabImageRecipe): Promise<ImageContract> {
  const plan = labImagePlan(recipe);
  const inputs = new Map<string, string[]>();
  for (const program of plan.programs.filter((candidate) => candidate.bundle)) {
    const result = await build({ ...bundleOptions(program, join(REPO, 'unused.cjs')), write: false, metafile: true });
    inputs.set(
      program.source,
      Object.keys(result.metafile.inputs).map((file) => relative(REPO, join(REPO, file))),
    );
  }
  return nodePlanContract(plan, recipe.hookPath, inputs);
}

describe('the lab image recipe', () => {
  const dockerfile = readFileSync(DOCKERFILE, 'utf8');

  it('server/Dockerfile holds exactly the lab stage the recipe renders', () => {
    const labStage = splitStages(dockerfile).find((stage) =>
      dockerfileStages(stage).some((candidate) => candidate.from.getBuildStage() === LAB_STAGE),
    );
    expect(labStage?.trim(), REGENERATE).toBe(renderLabStage(LAB_IMAGE).trim());
  });

  it('the lab stage is the last one, so docker build without --target builds it', () => {
    const stages = dockerfileStages(dockerfile);
    expect(stages.at(-1)?.from.getBuildStage(), 'other targets go above the lab stage').toBe(LAB_STAGE);
  });

  it('pins every base image by digest', () => {
    for (const { from } of dockerfileStages(dockerfile))
      expect(from.getImageDigest(), from.getImage() ?? '').toMatch(DIGEST);
  });

  it('passes the Docker language server linter (dockerfile-utils), which does find a broken Dockerfile', () => {
    expect(validate(dockerfile)).toEqual([]);
    const broken = dockerfile
      .replace(/^STOPSIGNAL .*$/m, 'STOPSIGNAL')
      .replace(/^ENTRYPOINT .*$/m, "ENTRYPOINT ['node']");
    expect(validate(broken).length).toBeGreaterThanOrEqual(2);
  });

  it('the Dockerfile and the CI node builder install the same programs with the same configuration', async () => {
    const fromDockerfile = dockerfileContract(labStageOf(dockerfile), LAB_IMAGE.appDir);
    expect(fromDockerfile).toEqual(await nodeContract(LAB_IMAGE));
    // The pod's exec hook names the path both images install it at.
    expect(fromDockerfile.hookPath).toBe(HOOK_PROGRAM);
    expect(fromDockerfile.entrySource).toBe(LAB_IMAGE.entryPoint);
  });

  it('a hand edit of the Dockerfile, or a source the recipe forgot, is caught', async () => {
    const node = await nodeContract(LAB_IMAGE);
    const asRoot = renderLabStage(LAB_IMAGE).replace(/^USER .*$/m, 'USER 0');
    expect(dockerfileContract(labStageOf(asRoot), LAB_IMAGE.appDir)).not.toEqual(node);
    const forgetful = { ...LAB_IMAGE, sources: LAB_IMAGE.sources.filter((source) => source !== 'server/work.ts') };
    expect(dockerfileContract(labStageOf(renderLabStage(forgetful)), LAB_IMAGE.appDir)).not.toEqual(node);
  });

  it('a shell-script hook is copied as it is by both builders', () => {
    const shellHook = { ...LAB_IMAGE, hookProgram: 'server/lab-hook.sh' };
    const contract = dockerfileContract(labStageOf(renderLabStage(shellHook)), shellHook.appDir);
    const plan = labImagePlan(shellHook);
    expect(contract.hookSource).toBe('server/lab-hook.sh');
    expect(plan.programs.find((program) => program.target === shellHook.hookPath)).toMatchObject({
      source: 'server/lab-hook.sh',
      bundle: false,
    });
    expect(plan.hostPrograms.map((program) => program.to)).toContain('/bin/sh');
  });

  it('regenerating keeps other stages above the lab stage', () => {
    const others = dockerfileStages(dockerfile)
      .map((stage) => stage.from.getBuildStage())
      .filter((name) => name !== LAB_STAGE);
    const extra = `FROM busybox@sha256:${'0'.repeat(64)} AS extra\nCMD ["true"]\n`;
    const appended = `${dockerfile}\n${extra}`;
    const regenerated = withRenderedLabStage(appended);
    expect(dockerfileStages(regenerated).map((stage) => stage.from.getBuildStage())).toEqual([
      ...others,
      'extra',
      LAB_STAGE,
    ]);
    // Regenerating is idempotent: the lab stage stays last, the others keep their order.
    expect(withRenderedLabStage(regenerated)).toBe(regenerated);
  });

  it('names the image the pod template runs, and the node tags it the same', () => {
    const pod = parse(readFileSync(join(REPO, 'manifests/lab-pod.yaml'), 'utf8'));
    expect(pod.spec.containers[0].image).toBe(imageReference(LAB_IMAGE));
    expect(NODE_LAB_IMAGE).toBe(`docker.io/${imageReference(LAB_IMAGE)}`);
    const args = umociConfigArgs(labImagePlan().config);
    expect(args.slice(args.indexOf('--config.user'), args.indexOf('--config.user') + 2)).toEqual([
      '--config.user',
      String(LAB_IMAGE.user),
    ]);
  });
});
