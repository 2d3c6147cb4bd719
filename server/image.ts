// The one recipe for the lab server image. server/Dockerfile (kind, any registry) is rendered from
// it by server/dockerfile.ts, and the CI node's builder (dev/node/images.ts) reads it, so the
// two images cannot drift; test/ci/image-recipe.test.ts fails when they disagree.
// Paths in `sources` and `hookProgram` are relative to the repository root.
import { HOOK_PROGRAM } from './contract.ts';

export interface LabImageRecipe {
  /** Repository and tag: what manifests/lab-pod.yaml runs and what `kind load docker-image` loads. */
  repository: string;
  tag: string;
  /** The Dockerfile's base, pinned by digest; Node 24 runs the TypeScript sources directly. */
  baseImage: string;
  /** Where the sources go inside the image; the server's own package.json marks them as ESM. */
  appDir: string;
  /** Every file the server needs at run time (the entry point and what it imports). */
  sources: string[];
  /** The program PID 1 runs. */
  entryPoint: string;
  /** The exec preStop hook program; `.ts` runs through Node, `.sh` is copied as it is. */
  hookProgram: string;
  /** Where the hook program is installed; the preStop exec command names this path. */
  hookPath: string;
  /** Numeric, so `runAsNonRoot` can verify it. */
  user: number;
  stopSignal: string;
  port: number;
  env: Record<string, string>;
}

export const LAB_IMAGE: LabImageRecipe = {
  repository: 'termlab/lab-server',
  tag: '0.1.0',
  baseImage: 'node:24-alpine@sha256:a0b9bf06e4e6193cf7a0f58816cc935ff8c2a908f81e6f1a95432d679c54fbfd',
  appDir: '/app',
  sources: [
    'server/main.ts',
    'server/app.ts',
    'server/config.ts',
    'server/contract.ts',
    'server/events.ts',
    'server/http.ts',
    'server/kube-api.ts',
    'server/ledger.ts',
    'server/load.ts',
    'server/proxy.ts',
    'server/witness.ts',
    'server/work.ts',
  ],
  entryPoint: 'server/main.ts',
  hookProgram: 'server/lab-hook.sh',
  hookPath: HOOK_PROGRAM,
  user: 1000,
  stopSignal: 'SIGTERM',
  port: 8080,
  env: { LAB_MODE: 'graceful', PORT: '8080', HOST: '0.0.0.0' },
};

export function imageReference(recipe: LabImageRecipe): string {
  return `${recipe.repository}:${recipe.tag}`;
}

/** A repository path's place inside the image: server/main.ts -> /app/server/main.ts. */
export function pathInImage(recipe: LabImageRecipe, source: string): string {
  return `${recipe.appDir}/${source}`;
}

export function hookIsShellScript(recipe: LabImageRecipe): boolean {
  return recipe.hookProgram.endsWith('.sh');
}
