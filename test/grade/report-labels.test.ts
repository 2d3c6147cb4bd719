// The report's timelines, read back from the SVG they are drawn in (issue 39, item 12): no label prints on
// top of another, over the default, sidecar and retries reports built from recorded runs (the simulated
// cluster and the real node), each scenario's chart and each lab pair's. Text boxes are approximated from the SVG alone: width = characters × font
// size × 0.6 (a wide sans-serif average), height = the font size above the baseline.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { gradePaths } from '../../harness/grade/files.ts';
import { renderHtml } from '../../harness/report/html.ts';
import { renderMarkdown } from '../../harness/report/markdown.ts';
import {
  FIXTURES,
  fontSizes,
  REPORTS,
  reportHtml,
  type TextBox,
  textBoxes,
  verifyReportHtml,
} from '../support/report-svg.ts';

const intersect = (a: TextBox, b: TextBox) => a.x0 < b.x1 && b.x0 < a.x1 && a.y0 < b.y1 && b.y0 < a.y1;

describe('timeline labels', () => {
  for (const [name, dirs] of Object.entries(REPORTS))
    it(`no two labels of the ${name} report overlap`, async () => {
      const html = await reportHtml(dirs);
      const sizes = fontSizes(html);
      const svgs = [...html.matchAll(/<svg [^>]*aria-label="timeline of ([^"]*)"[^>]*>([\s\S]*?)<\/svg>/g)];
      expect(svgs.length).toBeGreaterThan(3);
      // The pair's chart too, both pods on one axis: its rows are the most crowded.
      expect(svgs.filter(([, scenario]) => scenario!.startsWith('lab pair ')).length).toBe(dirs.length);
      const overlaps: string[] = [];
      for (const [, scenario, svg] of svgs) {
        const boxes = textBoxes(svg!, sizes);
        expect(boxes.length).toBeGreaterThan(4);
        boxes.forEach((a, i) => {
          for (const b of boxes.slice(i + 1))
            if (intersect(a, b)) overlaps.push(`${scenario}: "${a.text}" × "${b.text}"`);
        });
        // Nor is a label drawn under a mark (a diamond 14 px wide, 16 high, from its top point).
        for (const [, cx, top] of svg!.matchAll(/<path d="M(-?[\d.]+) (-?[\d.]+) l7 8/g)) {
          const mark = { text: 'mark', x0: Number(cx) - 7, x1: Number(cx) + 7, y0: Number(top), y1: Number(top) + 16 };
          for (const b of boxes) if (intersect(mark, b)) overlaps.push(`${scenario}: a mark at x ${cx} × "${b.text}"`);
        }
      }
      expect(overlaps).toEqual([]);
    });
});

describe('the verify report', () => {
  it("no two of its chart's labels overlap (each pod's D, E, T, K and X)", async () => {
    const html = await verifyReportHtml();
    const svg = html.match(/<svg [^>]*aria-label="requests over time per pod"[^>]*>([\s\S]*?)<\/svg>/)![1]!;
    const boxes = textBoxes(svg, fontSizes(html));
    // Three old pods, each deleted, marked not ready, sent TERM and exited: at least four letters each.
    expect(boxes.filter((b) => b.text.length === 1).length).toBeGreaterThanOrEqual(12);
    const overlaps: string[] = [];
    boxes.forEach((a, i) => {
      for (const b of boxes.slice(i + 1)) if (intersect(a, b)) overlaps.push(`"${a.text}" × "${b.text}" at x ${a.x0}`);
    });
    expect(overlaps).toEqual([]);
  });
});

describe('a pod with a sidecar in the reports', () => {
  it('the lane calls a regular container what the text calls it', async () => {
    const html = await reportHtml([join(FIXTURES, 'sidecar/sim')]);
    expect(html).toContain('regular container');
    expect(html).not.toContain('regular sidecar');
    expect(html).toMatch(/<text [^>]*class="row">proxy \(regular container\)<\/text>/);
    expect(html).toMatch(/<text [^>]*class="row">proxy \(native sidecar\)<\/text>/);
  });
  it("the table shows each container's exit code, the app's first", async () => {
    const graded = await gradePaths([join(FIXTURES, 'sidecar/sim')]);
    const html = renderHtml(graded.results, graded.pairs);
    const md = renderMarkdown(graded.results, graded.pairs);
    const row = html.match(/<tr><td><a href="#s\d+-sidecar-regular-proxy">[\s\S]*?<\/tr>/)![0];
    expect(row).toContain('<td>lab 0 (Completed) · proxy 17 (Error)</td>');
    expect(md).toMatch(/\| sidecar-regular-proxy \|.*\| lab 0 \(Completed\) · proxy 17 \(Error\) \|/);
    // A pod of one container keeps its one code.
    const one = await gradePaths([join(FIXTURES, 'node')]);
    expect(renderHtml(one.results)).toContain('<td>137 (Error)</td>');
  });
});
