// An edge scenario published by an Ingress of class traefik instead of an HTTPRoute, on the simulated cluster:
// the route is the Ingress, the load reaches the pods through it, and (a) is graded as the model says.
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { EdgeObservationSchema } from '../../harness/observation/edge.ts';
import { gradePaths } from '../../harness/grade/files.ts';
import { runCli } from '../support/cli.ts';
import { RUN_TIMEOUT_MS } from '../support/manifest-run.ts';

describe('an edge scenario via an Ingress', () => {
  it(
    'creates an Ingress of class traefik, loses requests to the edge lag with no preStop, and matches the model',
    async () => {
      const dir = mkdtempSync(join(tmpdir(), 'termlab-edge-ingress-'));
      const manifest = readFileSync('manifests/edge.yaml', 'utf8');
      const first = manifest.slice(
        manifest.indexOf('  - kind: edge'),
        manifest.indexOf('  - kind: edge', manifest.indexOf('  - kind: edge') + 1),
      );
      const file = join(dir, 'edge-ingress.yaml');
      writeFileSync(
        file,
        `scenarios:\n${first
          .replace('via: httproute', 'via: ingress')
          .replace('name: edge-no-prestop', 'name: edge-ingress')
          .replace(/ {4}labPair: .*\n/, '')}`,
      );
      const out = join(dir, 'run');
      const r = await runCli(['run', '--sim', '--reveal', '--scenarios', file, '--output-dir', out]);
      const o = EdgeObservationSchema.parse(
        JSON.parse(readFileSync(join(out, 'edge-ingress.observation.json'), 'utf8')),
      );
      expect(o.edge.route?.kind).toBe('Ingress');
      expect(o.edge.accessLogs.flatMap((l) => l.lines).length).toBeGreaterThan(0);
      const { results } = await gradePaths([out]);
      expect(results[0]!.verdict, results[0]!.explanation).toBe('matches-model');
      expect(r.code).toBe(0);
    },
    RUN_TIMEOUT_MS,
  );
});
