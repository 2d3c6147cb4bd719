// `termlab verify deployment/web --via httproute/web --method POST` on the project's real node (Kubernetes 1.37.2,
// Traefik v3.7.13, 2026-12-07): the lab app naive (LAB_KEEPALIVE=naive: it closes its idle connections and exits at
// TERM), no preStop, begun while the previous rollout's pods (a 5 s preStop sleep) were still terminating. The edge
// went on sending POSTs to the deleted pods' vanished addresses; the load gave up on them at 10 s, and Traefik
// logged each 504 at its 30 s dial timeout, which verify now waits for (harness/verify/edge-logs.ts).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseVerification } from '../../harness/verify/files.ts';
import { gradeVerification } from '../../harness/verify/grade.ts';
import type { VerificationObservation } from '../../harness/observation/verification.ts';

const FILE = join(import.meta.dirname, 'fixtures', 'node-naive-post.verification.json');
const recorded = () => JSON.parse(readFileSync(FILE, 'utf8')) as VerificationObservation;
const grade = (o: VerificationObservation) => gradeVerification(parseVerification(o, FILE));
const timedOut = (o: VerificationObservation) =>
  o.evidence
    .loadLog!.lines.map((l) => JSON.parse(l.text))
    .filter((r) => r.errorCode === 'ETIMEDOUT')
    .map((r) => r.id as string);

describe('verify through the real Traefik: POSTs to a deleted pod, logged at the dial timeout', () => {
  it("puts each one the load gave up on at 10 s on the edge's lag, by its 504 line at 30 s", () => {
    const o = recorded();
    const ids = timedOut(o);
    expect(ids.length).toBeGreaterThan(40);
    const g = grade(o);
    const byId = new Map(g.edge!.findings.map((f) => [f.id, f]));
    for (const id of ids)
      expect(byId.get(id)?.cause, `${id}: ${byId.get(id)?.why}`).toBe('edge-routed-to-removed-endpoint');
    expect(g.edge!.undecided).toBeLessThanOrEqual(2);
  });

  it('without those late lines, the same requests are not put on any pod: the edge never logged them', () => {
    const o = recorded();
    for (const log of o.evidence.edgeLogs ?? [])
      log.lines = log.lines.filter((l) => !/"Duration":(29|30)\d{9},/.test(l.text));
    const g = grade(o);
    const byId = new Map(g.edge!.findings.map((f) => [f.id, f]));
    for (const id of timedOut(o)) expect(byId.get(id)?.why).toMatch(/^the edge logged no request/);
  });

  it("advises from the pods its own act deleted, not the earlier rollout's still terminating when it began", () => {
    const g = grade(recorded());
    // The earlier rollout's three pods (their 5 s sleep) were deleted before the act; the act's three had none.
    expect(g.pods.filter((p) => p.deletion !== null && p.deletion < 0).map((p) => p.preStopSleepSeconds)).toEqual([
      5, 5, 5,
    ]);
    expect(g.terminations).toBe(3);
    expect(g.advice.join('\n')).toMatch(/add `preStop: sleep` of at least \d+s — preStop sleep ≥ the edge's lag/);
    expect(g.advice.join('\n')).not.toMatch(/already outlasts/);
  });
});
