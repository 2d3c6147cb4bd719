// A recorded rollout (the project's real node, Kubernetes 1.34 with kube-proxy in iptables mode)
// graded offline, and tampering with it caught by the cross-checks between its sources: the load
// log, the lab pods' logs and the watch.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { gradeRollout } from '../../harness/grade/rollout/grade.ts';
import { RolloutObservationSchema, type RolloutObservation } from '../../harness/observation/rollout.ts';
import { renderHtml } from '../../harness/report/html.ts';
import { renderMarkdown } from '../../harness/report/markdown.ts';
import { lifecycleRows } from '../../harness/report/rollout.ts';

const FIXTURE = new URL('./fixtures/rollout/node-rollout-adds-prestop.observation.json', import.meta.url);
const load = (): RolloutObservation => RolloutObservationSchema.parse(JSON.parse(readFileSync(FIXTURE, 'utf8')));
const status = (o: RolloutObservation, id: string) => gradeRollout(o).checks.find((c) => c.id === id)?.status;

describe('rollout grading', () => {
  it('grades the recording: every live lifecycle captured, the old pods shown without the hook the template has', () => {
    const r = gradeRollout(load());
    expect(status(load(), 'evidence.load-log')).toBe('pass');
    expect(status(load(), 'evidence.requests-vs-lab-logs')).toBe('pass');
    expect(status(load(), 'evidence.lifecycle-captured')).toBe('pass');
    expect(status(load(), 'evidence.lifecycle-consistent')).toBe('pass');
    expect(
      r
        .rollout!.pods.filter((p) => p.revision === 'old')
        .every((p) => p.live === 'no preStop hook' && p.template === 'no preStop hook'),
    ).toBe(true);
    expect(r.rollout!.templateAfter).toBe('preStop exec 5s');
    expect(r.rollout!.templateExposure).toBe('none');
    expect(r.checks.find((c) => c.id === 'rollout.template-vs-live')!.reason).toContain('not the new template');
    // The pitfall, recorded: requests refused after the old pods' TERM, though the new template has the hook.
    expect(r.verdict).toBe('matches-model');
    expect(r.rollout!.requests.oldFailed).toBeGreaterThan(0);
    expect(r.rollout!.causes['refused after TERM']).toBeGreaterThan(0);
  });

  it("catches a failed request rewritten as completed (the load's own tally disagrees)", () => {
    const o = load();
    const lines = o.evidence.loadLog!.lines;
    const index = lines.findIndex((l) => l.text.includes('"outcome":"failed"'));
    lines[index]!.text = lines[index]!.text.replace('"outcome":"failed"', '"outcome":"completed"');
    const r = gradeRollout(o);
    expect(r.verdict).toBe('evidence-invalid');
  });

  it('catches a failed request rewritten as completed together with the tally (no lab pod completed it)', () => {
    const o = load();
    const lines = o.evidence.loadLog!.lines;
    const index = lines.findIndex((l) => l.text.includes('"outcome":"failed"'));
    const podUid = o.evidence.podEvents.find((e) => e.role === 'lab')!.uid;
    lines[index]!.text = lines[index]!.text.replace('"outcome":"failed"', '"outcome":"completed"')
      .replace('"podUid":null', `"podUid":"${podUid}"`)
      .replace('"status":null', '"status":200');
    const end = lines.findIndex((l) => l.text.includes('"event":"load-end"'));
    const tally = JSON.parse(lines[end]!.text);
    lines[end]!.text = JSON.stringify({ ...tally, completed: tally.completed + 1, failed: tally.failed - 1 });
    const r = gradeRollout(o);
    expect(r.verdict).toBe('evidence-invalid');
    expect(r.checks.find((c) => c.id === 'evidence.requests-vs-lab-logs')!.status).toBe('fail');
  });

  it("catches the old pods' live lifecycle replaced by the new template's (the watch and their logs disagree)", () => {
    const o = load();
    const hook = o.template.after!.containers[0]!.lifecycle;
    const oldHash = o.evidence.podEvents.find((e) => e.role === 'lab')!.templateHash;
    for (const read of o.liveReads)
      if (read.templateHash === oldHash) read.containers[0]!.lifecycle = structuredClone(hook);
    const r = gradeRollout(o);
    expect(r.verdict).toBe('evidence-invalid');
    expect(r.checks.find((c) => c.id === 'evidence.lifecycle-consistent')!.status).toBe('fail');
  });

  it('catches a live read dated after the pod was gone', () => {
    const o = load();
    const read = o.liveReads[0]!;
    const deleted = o.evidence.podEvents.find((e) => e.uid === read.uid && e.type === 'DELETED')!;
    read.at = { ...read.at, mono: deleted.receivedAt.mono + 1000 };
    expect(status(o, 'evidence.lifecycle-captured')).toBe('fail');
  });

  it("an old pod without its live read is shown as not captured, never with the template's lifecycle", () => {
    const o = load();
    const oldHash = o.evidence.podEvents.find((e) => e.role === 'lab')!.templateHash;
    const dropped = o.liveReads.find((r) => r.templateHash === oldHash)!;
    o.liveReads = o.liveReads.filter((r) => r !== dropped);
    const r = gradeRollout(o);
    expect(r.checks.find((c) => c.id === 'evidence.lifecycle-captured')!.status).toBe('inconclusive');
    expect(r.checks.find((c) => c.id === 'rollout.template-vs-live')!.status).toBe('inconclusive');
    const row = lifecycleRows(r.rollout!).find((x) => x.pod === dropped.pod)!;
    expect(row.live).toBe('not captured');
    expect(renderMarkdown([r])).toContain(`| ${dropped.pod} | old | no preStop hook | not captured |`);
  });

  it('a request rewritten as answered by a pod the watch never saw is caught', () => {
    const o = load();
    const lines = o.evidence.loadLog!.lines;
    const index = lines.findIndex((l) => l.text.includes('"outcome":"completed"'));
    lines[index]!.text = lines[index]!.text.replace(
      /"podUid":"[^"]+"/,
      '"podUid":"00000000-0000-0000-0000-000000000000"',
    );
    expect(status(o, 'evidence.requests-vs-lab-logs')).toBe('fail');
  });

  it("reports template beside live lifecycle, the pods' timeline and the requests plot", () => {
    const r = gradeRollout(load());
    const html = renderHtml([r]);
    expect(html).toContain('Template vs live lifecycle');
    expect(html).toContain('aria-label="requests over time"');
    expect(html).toContain('aria-label="pods over time"');
    const md = renderMarkdown([r]);
    expect(md).toContain('| pod | revision | its template | live pod (read as it terminated) |');
    expect(md).toMatch(/one character a second/);
  });
  it('does not take a pod log as whole through an API outage: a line missing then is not tampering', () => {
    const o = load();
    const pod = o.evidence.podLogs.find((l) => l.lines.some((line) => line.text.includes('"event":"completed"')))!;
    const completed = pod.lines.findIndex((line) => line.text.includes('"event":"completed"'));
    pod.lines.splice(completed, 1);
    expect(status(o, 'evidence.requests-vs-lab-logs')).toBe('fail');
    const at = o.evidence.watchLifecycle[0]!.at;
    o.evidence.watchLifecycle.push({
      ...o.evidence.watchLifecycle[0]!,
      event: 'dropped',
      at: { ...at, mono: at.mono + 1 },
    });
    expect(status(o, 'evidence.requests-vs-lab-logs')).not.toBe('fail');
  });
});

describe('a pod gone before its live read came back', () => {
  // On a busy node an old pod with no hook can end within the read's round trip (the real node's rollout,
  // 2026-12-02: "the read found nothing", inconclusive). The runner then keeps the watch event's object.
  const fromWatch = (o: RolloutObservation) => {
    const read = o.liveReads[0]!;
    read.source = 'watch';
    read.resourceVersion = read.after.resourceVersion;
    return read;
  };

  it('counts the lifecycle from the watch event that showed the deletion as captured, and says so', () => {
    const o = load();
    fromWatch(o);
    const check = gradeRollout(o).checks.find((c) => c.id === 'evidence.lifecycle-captured')!;
    expect(check.status).toBe('pass');
    expect(check.reason).toMatch(/1 from the watch event that showed the deletion/);
  });

  it('catches a watch-sourced lifecycle dated at another resourceVersion than its event', () => {
    const o = load();
    fromWatch(o).resourceVersion = `${o.liveReads[0]!.after.resourceVersion}9`;
    expect(status(o, 'evidence.lifecycle-captured')).toBe('fail');
  });
});
