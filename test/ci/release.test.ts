// .github/workflows/release.yml: linted by actionlint, and its image names, build targets and tags in
// step with the recipe (server/image.ts, server/Dockerfile), the reaper CronJob and the docs.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parse, parseAllDocuments } from 'yaml';
import { REPO } from '../../dev/kind/versions.ts';
import { RELEASED_LAB_IMAGE } from '../../harness/run/image-pull.ts';
import { DOCKERFILE, LAB_STAGE } from '../../server/dockerfile.ts';
import { LAB_IMAGE } from '../../server/image.ts';
import { actionsUsed, COMMIT_PIN, expectLintsClean, lint, useActionlint } from './actionlint.ts';
import { dockerfileStages } from './dockerfile-contract.ts';

const WORKFLOW = join(REPO, '.github/workflows/release.yml');
const REAPER_STAGE = 'reaper';
const read = (path: string) => readFileSync(join(REPO, path), 'utf8');

const linter = useActionlint();

const workflow = parse(read('.github/workflows/release.yml'));
const job = workflow.jobs.images;
const runs: string[] = job.steps.map((s: any) => String(s.run ?? ''));
const version: string = JSON.parse(read('package.json')).version;

const RELEASE_PREFIX = 'ghcr.io/<owner>/';

/** The reaper CronJob's image, a release's (ghcr.io/<owner>/…), split at the tag. */
function reaperImage(): { repository: string; tag: string } {
  const cronJob = parseAllDocuments(read('manifests/reaper-cronjob.yaml'))
    .map((d) => d.toJSON())
    .find((d) => d?.kind === 'CronJob');
  const image: string = cronJob.spec.jobTemplate.spec.template.spec.containers[0].image;
  expect(image.startsWith(RELEASE_PREFIX), image).toBe(true);
  const [repository, tag] = image.slice(RELEASE_PREFIX.length).split(':') as [string, string];
  return { repository, tag };
}

describe('the release workflow, linted by actionlint', () => {
  const scratch = mkdtempSync(join(tmpdir(), 'termlab-release-'));
  afterAll(() => rmSync(scratch, { recursive: true, force: true }));

  it('has no actionlint errors', (context) => expectLintsClean(context, linter.path, linter.skipReason, WORKFLOW));

  it('actionlint does reject a broken copy of it', (context) => {
    if (!linter.path) context.skip(linter.skipReason);
    const broken = read('.github/workflows/release.yml').replace(
      'steps.version.outputs.lab',
      'steps.versions.outputs.lab',
    );
    const dir = join(scratch, '.github/workflows');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'release.yml'), broken);
    const { status, errors } = lint(linter.path!, join(dir, 'release.yml'));
    expect(status).toBe(1);
    expect(errors.some((error) => error.message.includes('versions'))).toBe(true);
  });
});

describe('the release workflow, in step with the recipe', () => {
  it('runs on version tags only, with the rights to push packages and write the release', () => {
    expect(workflow.on).toEqual({ push: { tags: ['v*'] } });
    expect(workflow.permissions).toEqual({ contents: 'read' });
    expect(job.permissions).toEqual({ contents: 'write', packages: 'write' });
  });

  it('pins every action by commit', () => {
    const uses = actionsUsed(workflow);
    expect(uses.length).toBeGreaterThan(0);
    for (const action of uses) expect(action).toMatch(COMMIT_PIN);
  });

  it("pushes to ghcr.io under the repository owner, with the recipe's and the reaper CronJob's repositories", () => {
    expect(workflow.env).toMatchObject({
      REGISTRY: 'ghcr.io',
      LAB_REPOSITORY: LAB_IMAGE.repository,
      REAPER_REPOSITORY: reaperImage().repository,
      PLATFORMS: 'linux/amd64,linux/arm64',
    });
    const names = runs.find((run) => run.includes('GITHUB_OUTPUT'))!;
    expect(names).toContain('echo "lab=$REGISTRY/$owner/$LAB_REPOSITORY:$version"');
    expect(names).toContain('echo "reaper=$REGISTRY/$owner/$REAPER_REPOSITORY:$version"');
    // Registry names are lower case; an owner need not be.
    expect(names).toContain(`owner="$(echo "$GITHUB_REPOSITORY_OWNER" | tr '[:upper:]' '[:lower:]')"`);
    expect(RELEASED_LAB_IMAGE).toBe(`ghcr.io/<owner>/${LAB_IMAGE.repository}:<version>`);
  });

  it("builds the Dockerfile's lab and reaper stages for both platforms and pushes them", () => {
    const stages = dockerfileStages(readFileSync(DOCKERFILE, 'utf8')).map((stage) => stage.from.getBuildStage());
    for (const [target, metadata] of [
      [LAB_STAGE, 'lab.json'],
      [REAPER_STAGE, 'reaper.json'],
    ] as const) {
      expect(stages).toContain(target);
      const build = runs.find((run) => run.includes(`--target ${target} `));
      expect(build, target).toBeDefined();
      expect(build).toMatch(
        new RegExp(`^docker buildx build -f server/Dockerfile --target ${target} --platform "\\$PLATFORMS"`),
      );
      expect(build).toContain(`--metadata-file ${metadata} --push .`);
    }
  });

  it('tags the images with the package version, which the tag must name and the recipe and CronJob use', () => {
    expect(runs.some((run) => run.includes('if [ "$GITHUB_REF_NAME" != "v$version" ]; then'))).toBe(true);
    expect(LAB_IMAGE.tag).toBe(version);
    expect(reaperImage().tag).toBe(version);
  });

  it("writes each image's tag and digest into the release notes", () => {
    const notes = runs.find((run) => run.includes('release-notes.md'))!;
    expect(notes).toContain(`lab_digest="$(jq -er '."containerimage.digest"' lab.json)"`);
    expect(notes).toContain(`reaper_digest="$(jq -er '."containerimage.digest"' reaper.json)"`);
    expect(notes).toMatch(/\$LAB\\?`? \| \\?`?\$lab_digest/);
    expect(notes).toMatch(/\$REAPER\\?`? \| \\?`?\$reaper_digest/);
    expect(runs.some((run) => run.includes('--notes-file release-notes.md'))).toBe(true);
  });

  it('the published names are the ones the docs and the reaper CronJob tell instructors to use', () => {
    const lab = `ghcr.io/<owner>/${LAB_IMAGE.repository}:${version}`;
    const reaper = `ghcr.io/<owner>/${reaperImage().repository}:${version}`;
    expect(read('docs/instructor-guide.md')).toContain(`--image ${lab}`);
    expect(read('docs/instructor-guide.md')).toContain(reaper);
    expect(read('docs/running.md')).toContain(`--image ${lab}`);
    expect(read('manifests/reaper-cronjob.yaml')).toContain(reaper);
  });
});
