// A recording of (a) edge-no-prestop on the project's real node (Kubernetes 1.37.2, Traefik v3.7.13, 2026-12-07):
// the model's answer for it holds against the real edge, from the file alone.
import { describe, expect, it } from 'vitest';
import { gradeFile } from '../../harness/grade/files.ts';
import { EDGE_LAG_SECONDS } from '../../harness/grade/edge/theory.ts';

const FIXTURE = new URL('./fixtures/edge/node-edge-no-prestop.observation.json', import.meta.url).pathname;

describe('edge-no-prestop through the real Traefik on the node', () => {
  it('matches the model: its failures are the edge still routing to the terminating pods, each with its access-log line', async () => {
    const r = await gradeFile(FIXTURE);
    expect(r.verdict, JSON.stringify(r.checks.filter((c) => c.status !== 'pass'))).toBe('matches-model');
    if (r.kind !== 'rollout' || !r.edge) throw new Error('an edge grade was expected');
    expect(r.edge.causes['edge-routed-to-removed-endpoint']).toBeGreaterThan(0);
    expect(r.checks.find((c) => c.id === 'evidence.edge-access-log')!.status).toBe('pass');
    // The real edge's lag stayed within the model's bound (its throttle plus its processing).
    expect(r.edge.measuredLagSeconds).toBeGreaterThan(0);
    expect(r.edge.measuredLagSeconds!).toBeLessThanOrEqual(EDGE_LAG_SECONDS);
  });
});
