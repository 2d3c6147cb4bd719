// One origin for a report's words and its picture (issue 39, item 13): every time the retries report prints in a
// scenario's text (the story of its attempts, the model's SIGTERM, SIGKILL and the work's end) is a mark or a bar's
// edge in that scenario's chart, to 10 ms, on the chart's axis: seconds from the delete.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FIXTURES, reportHtml, verifyReportHtml } from '../support/report-svg.ts';

/** Each card: its text's times (what they say and the seconds), and its chart's marks (each bar's start and end). */
function cards(html: string) {
  return [...html.matchAll(/<section [^>]*>([\s\S]*?)<\/section>/g)].map(([, card]) => {
    const scenario = card!.match(/<h2>([^ <]+)/)![1]!;
    const story = card!.match(/<\/h2>\s*<p>([^<]*)<\/p>/)![1]!;
    const model = card!.match(/<p class="muted">Model: ([^<]*)<\/p>/)![1]!;
    const said = [
      ...[...story.matchAll(/(?:at|from) (-?\d+\.\d+) s\b/g)].map((m) => ({ what: m[0], t: Number(m[1]) })),
      ...[...model.matchAll(/(?:SIGTERM at|SIGKILL at|work (?:would )?ends? at) (-?\d+(?:\.\d+)?)s/g)].map((m) => ({
        what: m[0],
        t: Number(m[1]),
      })),
    ];
    const marks = [...card!.matchAll(/<g data-t="(-?[\d.]+) (-?[\d.]+)">/g)].flatMap((m) => [
      Number(m[1]),
      Number(m[2]),
    ]);
    return { scenario, said, marks };
  });
}

describe('the retries report counts every time from the delete', () => {
  for (const where of ['sim', 'node'])
    it(`every time in the text is on the chart (${where})`, async () => {
      const html = await reportHtml([join(FIXTURES, `retries/${where}`)]);
      expect(html).toContain('Time 0 is the delete');
      const all = cards(html);
      expect(all.length).toBe(4);
      const off: string[] = [];
      for (const { scenario, said, marks } of all) {
        // The story's cut, effects and retries, and the model's TERM, KILL and work's end: at least four in each.
        expect(said.length, scenario).toBeGreaterThanOrEqual(4);
        for (const { what, t } of said)
          if (!marks.some((m) => Math.abs(m - t) <= 0.0101))
            off.push(
              `${scenario}: "${what}" has no mark within 10 ms (marks ${marks.map((m) => m.toFixed(3)).join(', ')})`,
            );
      }
      expect(off).toEqual([]);
    });
});

describe('the verify report counts every time from the rollout', () => {
  it('every time in its tables is a mark of its chart, to 10 ms', async () => {
    const html = await verifyReportHtml();
    const svg = html.match(/<svg [^>]*aria-label="requests over time per pod"[^>]*>([\s\S]*?)<\/svg>/)![1]!;
    const marks = [...svg.matchAll(/<g data-t="(-?[\d.]+) (-?[\d.]+)">/g)].flatMap((m) => [Number(m[1]), Number(m[2])]);
    // The pods' deletion, endpoint, TERM, exit and gone; each failed request's sent and ended.
    const tables = html.slice(html.indexOf('<h2>Pods</h2>'));
    const said = [...tables.matchAll(/<td>(-?\d+\.\d+)s<\/td>/g)].map((m) => Number(m[1]));
    expect(said.length).toBeGreaterThanOrEqual(15);
    const off = said.filter((t) => !marks.some((m) => Math.abs(m - t) <= 0.0101));
    expect(off, `marks ${marks.map((m) => m.toFixed(3)).join(', ')}`).toEqual([]);
    // Said to the 10 ms they are held to.
    expect(said.every((t) => /\.\d\d$/.test(t.toFixed(2)))).toBe(true);
    expect(tables).not.toMatch(/<td>-?\d+\.\ds<\/td>/);
  });
});
