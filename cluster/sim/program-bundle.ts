// A program of the package as one plain JavaScript file (a container's entrypoint, a worker thread's
// script): an installed package runs the one bin/cli-bundle.js built when it was packed; a checkout
// bundles its sources once per process with esbuild (a devDependency), so that the sim always runs
// them as they are written. Neither compiles TypeScript on each start, whatever loader the caller
// runs under (the CLI's bundle, tsx, vitest).
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { packagePath } from '../../lib/package-root.ts';

const built = new Map<string, Promise<string>>();

/** `source` and `shipped` are paths from the package's root; `what` names the program in an error. */
export function programBundle(source: string, shipped: string, what: string): Promise<string> {
  let bundle = built.get(source);
  if (!bundle) {
    bundle = (async () => {
      const sourcePath = packagePath(source);
      if (!existsSync(sourcePath)) {
        const shippedPath = packagePath(shipped);
        if (!existsSync(shippedPath))
          throw new Error(`${what} is missing from the package: neither ${sourcePath} nor ${shippedPath} is there`);
        return shippedPath;
      }
      const { build } = await import('esbuild');
      const dir = mkdtempSync(join(tmpdir(), 'termlab-sim-program-'));
      process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
      const outfile = join(dir, basename(shipped));
      await build({
        entryPoints: [sourcePath],
        bundle: true,
        platform: 'node',
        format: 'cjs',
        target: 'node20',
        outfile,
        logLevel: 'error',
      });
      return outfile;
    })();
    built.set(source, bundle);
  }
  return bundle;
}
