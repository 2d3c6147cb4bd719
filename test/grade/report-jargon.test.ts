// The model's steps in the lab's words (issue 39, item 14): "the rules run from the observed kubelet",
// "StopContainer(30s)" and "remainder 0s raised to 2s" were under every scenario, words a student does not know.
// The Model line says it plainly; the kubelet's own terms are one click away (a <details> under it), with a link
// to the docs section that explains each of them.
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { gradePaths } from '../../harness/grade/files.ts';
import { renderMarkdown } from '../../harness/report/markdown.ts';
import { writeReports } from '../../harness/report/write.ts';
import { repoRoot } from '../support/processes.ts';
import { REPORTS, unescapeXml } from '../support/report-svg.ts';

/** The kubelet's names: each belongs in the terms, none in the lab's words. */
const JARGON =
  /observed kubelet|StopContainer|raised to|minimumGracePeriod|executePreStopHook|killContainer|waitForTurn/;

async function written(dirs: string[]) {
  const graded = await gradePaths(dirs);
  const html = join(mkdtempSync(join(tmpdir(), 'termlab-jargon-')), 'report.html');
  await writeReports(graded, { html });
  return { graded, html, text: readFileSync(html, 'utf8') };
}

const cards = (html: string) =>
  [...html.matchAll(/<section [^>]*>([\s\S]*?)<\/section>/g)].map(([, card]) => ({
    scenario: card!.match(/<h2>([^ <]+)/)![1]!,
    model: unescapeXml(card!.match(/<p class="muted">Model: ([^<]*)<\/p>/)?.[1] ?? ''),
    terms: card!.match(/<details class="terms">([\s\S]*?)<\/details>/)?.[1] ?? null,
  }));

describe("the model's steps", () => {
  for (const [name, dirs] of Object.entries(REPORTS))
    it(`are said in the lab's words in the ${name} report, the kubelet's terms a click away`, async () => {
      const { text } = await written(dirs);
      const all = cards(text);
      expect(all.length).toBeGreaterThan(3);
      for (const { scenario, model, terms } of all) {
        expect(model, scenario).not.toBe('');
        expect(model, scenario).not.toMatch(JARGON);
        expect(terms, scenario).toContain("<summary>In the kubelet's terms</summary>");
        expect(terms, scenario).toMatch(/<code>StopContainer\(\d+s\): the stop signal at /);
      }
      // The markdown report says the same lab's words, with the same terms folded under each.
      const graded = await gradePaths(dirs);
      const md = renderMarkdown(graded.results, graded.pairs);
      const models = md.split('\n').filter((l) => l.startsWith('Model: '));
      expect(models.length).toBe(all.length);
      for (const line of models) expect(line).not.toMatch(JARGON);
      expect(
        md.match(
          /Model: .*\n\n<details><summary>In the kubelet's terms<\/summary>\n\n- ` killContainer with gracePeriod \d+s `\n/g,
        )?.length,
      ).toBe(all.length);
    });

  it('say what the 2 s minimum does, and keep its name in the terms (hook-outlasts-grace)', async () => {
    const { text } = await written(REPORTS.default!);
    const card = cards(text).find((c) => c.scenario === 'hook-outlasts-grace')!;
    expect(card.model).toContain(
      '0s of grace left, but the kubelet always gives at least 2s from SIGTERM to SIGKILL, even when the hook used the whole grace',
    );
    expect(card.model).toContain('the model counts from the TERM this run saw');
    expect(card.terms).toContain('<code>remainder 0s raised to 2s (minimumGracePeriodInSeconds)</code>');
    expect(card.terms).toContain('<code>executePreStopHook: 5s (whole seconds) taken off gracePeriod</code>');
    expect(card.terms).toContain('<code>the rules run from the observed kubelet');
  });

  it("name a sidecar's wait and stop in the terms, not in the words (sidecar-native-proxy)", async () => {
    const { text } = await written(REPORTS.sidecar!);
    const card = cards(text).find((c) => c.scenario === 'sidecar-native-proxy')!;
    expect(card.model).toMatch(/TERM at [\d.]+s, then \d+s to exit before SIGKILL at [\d.]+s/);
    expect(card.terms).toMatch(/<code>the proxy: waitForTurn [\d.]+s, StopContainer\(\d+s\) at [\d.]+s<\/code>/);
  });

  it("link to the docs section that explains every one of the kubelet's names", async () => {
    const { html, text } = await written(REPORTS.default!);
    const href = text.match(/<details class="terms">[\s\S]*?<a href="([^"#]+)#([^"]+)">/)!;
    // Relative to the report, to this checkout's docs/grading.md.
    expect(resolve(dirname(html), href[1]!)).toBe(join(repoRoot, 'docs/grading.md'));
    expect(href[2]).toBe('the-kubelets-terms');
    const doc = readFileSync(join(repoRoot, 'docs/grading.md'), 'utf8');
    const section = doc.slice(doc.indexOf("\n## The kubelet's terms\n"));
    expect(section.length).toBeLessThan(doc.length);
    const body = section.slice(0, section.indexOf('\n## ', 5));
    for (const name of [
      'killContainer',
      'executePreStopHook',
      'minimumGracePeriodInSeconds',
      'StopContainer',
      'waitForTurn',
      'observed kubelet',
    ])
      expect(body, name).toContain(name);
  });
});
