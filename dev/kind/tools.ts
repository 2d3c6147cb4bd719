// The programs kind:up and kind:down drive, each checked before use with a one-line message.
// A setup problem the user can fix is a TermlabError SETUP_FAILED of one line (dev/entry.ts prints it).
import { spawnSync } from 'node:child_process';
import { TermlabError } from '../../lib/errors.ts';
import { REPO } from './versions.ts';

const setupFailed = (message: string) => new TermlabError('SETUP_FAILED', message);

const INSTALL: Record<string, string> = {
  docker: 'install Docker (docs.docker.com/get-docker) and start it',
  kind: 'install kind: go install sigs.k8s.io/kind@VERSION (kind.sigs.k8s.io/docs/user/quick-start)',
  kubectl: 'install kubectl (kubernetes.io/docs/tasks/tools)',
};

export interface Run {
  status: number;
  stdout: string;
  stderr: string;
}

/** Runs a program to completion; a missing program becomes a SETUP_FAILED naming how to install it. */
export function run(program: string, args: string[], options: { inherit?: boolean; kindVersion?: string } = {}): Run {
  const result = spawnSync(program, args, {
    cwd: REPO,
    encoding: 'utf8',
    stdio: options.inherit ? ['ignore', 'inherit', 'inherit'] : 'pipe',
  });
  if ((result.error as NodeJS.ErrnoException | undefined)?.code === 'ENOENT') {
    throw setupFailed(
      `${program} not found on PATH: ${(INSTALL[program] ?? `install ${program}`).replace('VERSION', options.kindVersion ?? 'latest')}`,
    );
  }
  if (result.error) throw setupFailed(`${program} ${args.join(' ')}: ${result.error.message}`);
  // No status: ended by a signal, a failure.
  return { status: result.status ?? 1, stdout: result.stdout ?? '', stderr: result.stderr ?? '' };
}

/** Runs a step whose own output the user sees; a failure names the command. */
export function runStep(program: string, args: string[]): void {
  const result = run(program, args, { inherit: true });
  if (result.status !== 0) throw setupFailed(`${program} ${args.join(' ')} exited ${result.status}`);
}

export function firstLine(text: string): string {
  return text.trim().split('\n')[0] ?? '';
}

/** docker is there and its daemon answers. */
export function requireDocker(): void {
  const version = run('docker', ['version', '--format', '{{.Server.Version}}']);
  if (version.status !== 0)
    throw setupFailed(
      `docker is installed but its daemon does not answer (${firstLine(version.stderr) || `docker version exited ${version.status}`}): start Docker`,
    );
}

export function kindClusters(kindVersion: string): string[] {
  const clusters = run('kind', ['get', 'clusters'], { kindVersion });
  if (clusters.status !== 0)
    throw setupFailed(`kind get clusters exited ${clusters.status}: ${firstLine(clusters.stderr)}`);
  return clusters.stdout
    .split('\n')
    .map((line) => line.trim())
    .filter(Boolean);
}
