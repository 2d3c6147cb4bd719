// Which Go builds a module: the machine's own, or, for a module whose go.mod needs a newer one (Kubernetes
// 1.38 says `go 1.27.0`), the one newer Go this workplace serves, which the go command takes from the Go
// module proxy as its toolchain module. Only that module's commands get it; everything else stays local.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { sh, StepError } from './steps.ts';

export const NEWER_GO = 'go1.27.3';

/** The `go` directive of a go.mod's text (`go 1.27.0` -> '1.27.0'); undefined when it has none. */
export function goDirective(goMod: string): string | undefined {
  return /^go\s+(\d+\.\d+(?:\.\d+)?)\s*$/m.exec(goMod)?.[1];
}

function parts(version: string): number[] {
  return version
    .replace(/^go/, '')
    .split('.')
    .map((n) => Number.parseInt(n, 10) || 0);
}

/** a >= b for Go versions ('go1.26.8', '1.27.0', '1.27'). */
export function goAtLeast(a: string, b: string): boolean {
  const [x, y] = [parts(a), parts(b)];
  for (let i = 0; i < 3; i++) if ((x[i] ?? 0) !== (y[i] ?? 0)) return (x[i] ?? 0) > (y[i] ?? 0);
  return true;
}

let local: string | undefined;
/** The machine's own Go ('go1.26.8'), whatever a go.mod says. */
export function localGo(): string {
  local ??= sh('go', ['env', 'GOVERSION'], { env: { ...process.env, GOTOOLCHAIN: 'local' } }).trim();
  return local;
}

/** GOTOOLCHAIN for a module needing Go `required`: undefined when the machine's own will do. */
export function toolchainFor(required: string | undefined, have: string = localGo()): string | undefined {
  if (required === undefined || goAtLeast(have, required)) return undefined;
  if (goAtLeast(NEWER_GO, required)) return NEWER_GO;
  throw new StepError(
    `the module needs Go ${required}; this machine has ${have} and the newest Go served is ${NEWER_GO}`,
  );
}

/** The environment for go commands in a module directory, from its go.mod's go line. */
export function goEnvFor(moduleDir: string, have?: string): NodeJS.ProcessEnv {
  const file = join(moduleDir, 'go.mod');
  const toolchain = existsSync(file) ? toolchainFor(goDirective(readFileSync(file, 'utf8')), have) : undefined;
  return toolchain ? { ...process.env, GOTOOLCHAIN: toolchain } : { ...process.env };
}
