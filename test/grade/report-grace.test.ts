// The picture of the lesson (issue 39, item 11): the grace is drawn from when the kubelet began, not from the
// delete; the hook sits inside it, TERM and the model's SIGKILL are marked, and one plain caption under each chart
// says what the budget did. On the real node's recordings of the default scenarios.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { gradePaths } from '../../harness/grade/files.ts';
import { renderHtml } from '../../harness/report/html.ts';
import { FIXTURES } from '../support/report-svg.ts';

async function graded() {
  const run = await gradePaths([join(FIXTURES, 'node')]);
  const by = (name: string) => run.results.find((r) => r.scenario === name)!;
  return { run, by };
}
const bar = (r: { timeline: { kind: string; label: string; start: number; end: number }[] }, kind: string) =>
  r.timeline.find((b) => b.kind === kind && b.start !== b.end) ?? r.timeline.find((b) => b.kind === kind)!;

describe('the grace on the chart', () => {
  it('runs from when the kubelet began: the hook inside it, SIGKILL at its end (short-grace)', async () => {
    const { by } = await graded();
    const r = by('short-grace');
    const grace = bar(r, 'grace'),
      hook = bar(r, 'hook'),
      kill = bar(r, 'kill');
    expect(grace.end - grace.start).toBeCloseTo(5, 3);
    // The kubelet began with the hook, after the delete (0.5 s in this recording; up to about 1.9 s on a loaded node).
    expect(grace.start).toBeGreaterThan(0.3);
    expect(Math.abs(hook.start - grace.start)).toBeLessThan(0.3);
    expect(hook.end).toBeLessThan(grace.end);
    // 3 whole seconds of hook, 2 left: SIGKILL at the grace's end, give or take the hook's fraction of a second.
    expect(Math.abs(kill.start - grace.end)).toBeLessThan(0.3);
    expect(r.timeline.some((b) => b.kind === 'grace' && b.start === b.end && /kubelet began/.test(b.label))).toBe(true);
  });
  it('a hook that outlasts the grace is cut at its end: TERM at the grace end, then the 2 s (hook-outlasts-grace)', async () => {
    const { by } = await graded();
    const r = by('hook-outlasts-grace');
    const grace = bar(r, 'grace'),
      term = bar(r, 'term'),
      kill = bar(r, 'kill');
    const began = r.timeline.find((b) => b.kind === 'grace' && b.label.startsWith('kubelet began'));
    expect(began?.start).toBe(grace.start);
    expect(Math.abs(term.start - grace.end)).toBeLessThan(0.3);
    expect(kill.start - term.start).toBeCloseTo(2, 1);
  });
  it('says under each chart, in one plain line, what the budget did', async () => {
    const { run } = await graded();
    const html = renderHtml(run.results, run.pairs);
    const captions = [...html.matchAll(/<\/svg>\s*<p class="caption">([^<]*)<\/p>/g)].map((m) => m[1]);
    expect(captions).toHaveLength(run.results.length);
    expect(html).toMatch(
      /<p class="caption">The hook used 3 of the 5 s; SIGTERM came with 2 s left; the request needed \d+(\.\d)? s more: cut at SIGKILL\.<\/p>/,
    );
    expect(html).toMatch(
      /<p class="caption">The hook outlasted the 5 s: the kubelet stopped waiting at the grace(?:'|&#39;)s end; SIGTERM came with 0 s left, raised to 2 s;/,
    );
    expect(html).toMatch(
      /<p class="caption">No hook; SIGTERM came with all 30 s left; the request needed \d+(\.\d)? s more: completed/,
    );
  });
});

describe('the caption of a pod with a sidecar', () => {
  it('says who ended the request at TERM: the proxy, when the app exited 0', async () => {
    const run = await gradePaths([join(FIXTURES, 'sidecar/sim')]);
    const html = renderHtml(run.results, run.pairs);
    const card = html.match(/id="s\d+-sidecar-regular-proxy"[\s\S]*?<\/section>/)![0];
    expect(card).toMatch(
      /<p class="caption">No hook; SIGTERM came with all 30 s left; the request needed \d+(\.\d)? s more, but the proxy \(regular container\) exited at SIGTERM: cut\.<\/p>/,
    );
  });
});

describe('a lab pair on one axis', () => {
  it('short-grace and restored-grace share their time axis, so they compare by eye', async () => {
    const { run } = await graded();
    const html = renderHtml(run.results, run.pairs);
    const ticks = (scenario: string) => {
      const svg = html.match(new RegExp(`aria-label="timeline of ${scenario}"[^>]*>([\\s\\S]*?)</svg>`))![1]!;
      return [...svg.matchAll(/<text x="([\d.]+)" y="[\d.]+" class="tick">([^<]*)<\/text>/g)].map(
        (m) => `${m[2]}@${Number(m[1]).toFixed(1)}`,
      );
    };
    expect(ticks('short-grace').length).toBeGreaterThan(3);
    expect(ticks('short-grace')).toEqual(ticks('restored-grace'));
  });
});
