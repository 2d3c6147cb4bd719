// A lab pair drawn as one picture (issue 39, item 11): both pods of each pair of each run on one chart, one time
// axis from the delete, each with when the kubelet began, its grace from there, the hook inside it, TERM, KILL and
// the request; under it each pod's caption, the same sentence as its own card's, whose figures the chart holds.
import { describe, expect, it } from 'vitest';
import { gradePaths } from '../../harness/grade/files.ts';
import type { GradeResult } from '../../harness/grade/types.ts';
import { graceCaption } from '../../harness/report/format.ts';
import { renderHtml } from '../../harness/report/html.ts';
import { REPORTS, unescapeXml } from '../support/report-svg.ts';

const PAIRS: Record<string, string[]> = {
  default: ['short-grace', 'restored-grace'],
  sidecar: ['sidecar-regular-proxy', 'sidecar-native-proxy'],
  retries: ['retry-doubles-effect', 'retry-with-key'],
};

/** Each pair's figure: its chart's halves (the marks after each heading) and its captions. */
function figures(html: string) {
  return [...html.matchAll(/<figure class="card pair">([\s\S]*?)<\/figure>/g)].map(([, fig]) => {
    const svg = fig!.match(/<svg [^>]*aria-label="timeline of lab pair [^"]*"[^>]*>([\s\S]*?)<\/svg>/)![1]!;
    const [, ...parts] = svg.split(/<text [^>]*class="half">/);
    const halves = parts.map((part) => ({
      name: part.slice(0, part.indexOf('<')),
      marks: [...part.matchAll(/<g data-t="(-?[\d.]+) (-?[\d.]+)">[\s\S]*?<title>([^<]*?): /g)].map((m) => ({
        label: unescapeXml(m[3]!),
        start: Number(m[1]),
        end: Number(m[2]),
      })),
    }));
    const captions = [...fig!.matchAll(/<p class="caption"><strong>([^<]*)<\/strong>: ([^<]*)<\/p>/g)].map((m) => ({
      name: m[1]!,
      text: unescapeXml(m[2]!),
    }));
    return { halves, captions };
  });
}

describe('each lab pair on one chart', () => {
  for (const [name, dirs] of Object.entries(REPORTS))
    it(`the ${name} report draws both pods of its pair on one axis, once per run`, async () => {
      const graded = await gradePaths(dirs);
      const html = renderHtml(graded.results, graded.pairs);
      const all = figures(html);
      // One figure per run of the pair: the recordings of the simulated cluster and of the real node are not mixed.
      expect(all).toHaveLength(dirs.length);
      for (const [i, { halves, captions }] of all.entries()) {
        expect(halves.map((h) => h.name)).toEqual(PAIRS[name]);
        for (const half of halves) {
          const r = graded.results.find(
            (x) => x.scenario === half.name && x.source.startsWith(dirs[i]!) && !x.supersededBy,
          ) as GradeResult;
          // The lesson's marks: when the kubelet began, the grace from there, TERM, the model's KILL, the request.
          for (const want of [
            /^kubelet began/,
            /^grace \d+s$/,
            /^SIGTERM$/,
            /^SIGKILL \(model/,
            /^(request|attempt 1) /,
          ])
            expect(
              half.marks.some((m) => want.test(m.label)),
              `${half.name}: ${want}`,
            ).toBe(true);
          // Every mark is the result's own bar, on the same origin (the delete) as its card's chart.
          for (const m of half.marks)
            expect(
              r.timeline.some(
                (b) => b.label === m.label && Math.abs(b.start - m.start) < 0.001 && Math.abs(b.end - m.end) < 0.001,
              ),
              `${half.name}: ${m.label} at ${m.start}`,
            ).toBe(true);
          if (name === 'default') expect(half.marks.some((m) => m.label.startsWith('preStop hook'))).toBe(true);
          // Its caption is its card's sentence, and the seconds it says the request needed are the chart's.
          const caption = captions.find((c) => c.name === half.name)!.text;
          expect(caption).toBe(graceCaption(r));
          const need = Number(caption.match(/the request needed (\d+(?:\.\d)?) s more/)![1]);
          const term = half.marks.find((m) => m.label === 'SIGTERM')!;
          const work = half.marks.find((m) => /^work (would end|ends) \(model\)$/.test(m.label))!;
          expect(Math.abs(work.start - term.start - need), `${half.name}: ${caption}`).toBeLessThanOrEqual(0.06);
        }
      }
    });
});
