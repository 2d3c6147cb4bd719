// The edge scenario file (manifests/edge.yaml) parses as its own kind, and a broken field names itself:
// its scenario, its path and its line, with the code of bad input.
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { exitCodeFor } from '../../lib/errors.ts';
import { loadScenarioSet, loadScenarios } from '../../harness/scenario/load.ts';
import { asRollout } from '../../harness/scenario/edge.ts';

const MANIFEST = 'manifests/edge.yaml';

/** manifests/edge.yaml with one text replaced (the first occurrence): a broken copy. */
function broken(from: string, to: string): string {
  const text = readFileSync(MANIFEST, 'utf8');
  if (!text.includes(from)) throw new Error(`the manifest has no ${from}`);
  const path = join(mkdtempSync(join(tmpdir(), 'termlab-edge-')), 'edge.yaml');
  writeFileSync(path, text.replace(from, to));
  return path;
}

describe('edge scenario files', () => {
  it('reads manifests/edge.yaml as edge scenarios (a)-(d), the pair halves among them', async () => {
    const set = await loadScenarioSet(MANIFEST);
    expect(set.kind).toBe('edge');
    if (set.kind !== 'edge') return;
    expect(set.scenarios.map((s) => s.name)).toEqual([
      'edge-no-prestop',
      'edge-short-sleep',
      'edge-sleep-outlasts-lag',
      'edge-naive-post',
    ]);
    expect(set.scenarios.map((s) => s.labPair?.role ?? null)).toEqual(['no-prestop', null, 'sleep-outlasts-lag', null]);
    // The pair's halves send the same load: only the sleep differs.
    const [a, , c] = set.scenarios;
    expect({ ...a!.load, app: a!.app }).toEqual({ ...c!.load, app: c!.app });
    // Its rollout replaces every pod with the same template.
    expect(asRollout(a!).from).toEqual(asRollout(a!).to);
  });

  it('(d) sends its POSTs on a new connection each: the real edge cuts some kept-alive POSTs by itself (golang/go#15527)', async () => {
    const set = await loadScenarioSet(MANIFEST);
    if (set.kind !== 'edge') throw new Error('an edge file was expected');
    const d = set.scenarios.find((s) => s.name === 'edge-naive-post')!;
    expect({ method: d.load.method, keepAlive: d.load.keepAlive, app: d.app.keepAlive }).toEqual({
      method: 'POST',
      keepAlive: false,
      app: 'naive',
    });
  });

  it('names a bad keep-alive variant by its scenario, path and line, as bad input', async () => {
    const error = await loadScenarioSet(broken('keepAlive: polite', 'keepAlive: rude')).catch((e: unknown) => e);
    expect(error).toMatchObject({
      code: 'SCENARIO_INVALID',
      message: expect.stringMatching(/scenario "edge-no-prestop": app\.keepAlive \(line \d+\): .*polite.*naive/),
    });
    expect(exitCodeFor((error as { code: 'SCENARIO_INVALID' }).code)).toBe(2);
  });

  it('names an unknown load field and a method the load does not send', async () => {
    await expect(loadScenarioSet(broken('method: GET }', 'method: GET, keepalive: true }'))).rejects.toThrow(
      /scenario "edge-no-prestop": load .*keepalive/,
    );
    await expect(loadScenarioSet(broken('method: POST', 'method: PUT'))).rejects.toThrow(
      /scenario "edge-naive-post": load\.method \(line \d+\)/,
    );
  });

  it('names a route kind it cannot publish, and a change after the load', async () => {
    await expect(loadScenarioSet(broken('via: httproute', 'via: grpcroute'))).rejects.toThrow(
      /scenario "edge-no-prestop": via \(line \d+\)/,
    );
    await expect(loadScenarioSet(broken('changeAfterMs: 3000', 'changeAfterMs: 95000'))).rejects.toThrow(
      /scenario "edge-no-prestop": changeAfterMs \(line \d+\): changeAfterMs must be shorter than load\.durationMs/,
    );
  });

  it('sends an edge file to `termlab run`, not to the pod scenarios', async () => {
    await expect(loadScenarios(MANIFEST)).rejects.toThrow(/edge scenarios \(kind: edge\) are run with `termlab run/);
  });
});
