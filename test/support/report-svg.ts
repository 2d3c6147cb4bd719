// The report's SVG read back: the recorded runs a report is built from, and its texts as boxes (test/grade/report-*.test.ts).
import { join } from 'node:path';
import { gradePaths } from '../../harness/grade/files.ts';
import { renderHtml } from '../../harness/report/html.ts';
import { gradeVerificationFile } from '../../harness/verify/files.ts';
import { renderVerifyHtml } from '../../harness/verify/report.ts';
import { repoRoot } from './processes.ts';

export const FIXTURES = join(repoRoot, 'test/grade/fixtures');
export const REPORTS: Record<string, string[]> = {
  default: [join(FIXTURES, 'node')],
  sidecar: [join(FIXTURES, 'sidecar/sim'), join(FIXTURES, 'sidecar/node')],
  retries: [join(FIXTURES, 'retries/sim'), join(FIXTURES, 'retries/node')],
};

/** The font size of each text class, as the report's style sheet sets it. */
export function fontSizes(html: string): Map<string, number> {
  const sizes = new Map<string, number>();
  for (const m of html.matchAll(/svg \.([\w-]+)\{font-size:(\d+)px/g)) sizes.set(m[1]!, Number(m[2]));
  return sizes;
}

export const unescapeXml = (s: string) =>
  s
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&amp;/g, '&');

export interface TextBox {
  text: string;
  x0: number;
  x1: number;
  y0: number;
  y1: number;
}

/** Every <text> of one SVG as a box, by its x, y, class (font size) and text-anchor. */
export function textBoxes(svg: string, sizes: Map<string, number>): TextBox[] {
  return [...svg.matchAll(/<text ([^>]*)>([^<]*)<\/text>/g)].map((m) => {
    const attr = (name: string) => m[1]!.match(new RegExp(`${name}="([^"]*)"`))?.[1];
    const text = unescapeXml(m[2]!);
    const size = sizes.get(attr('class') ?? '') ?? 12;
    const width = text.length * size * 0.6;
    const x = Number(attr('x')),
      y = Number(attr('y'));
    const x0 = attr('text-anchor') === 'middle' ? x - width / 2 : attr('text-anchor') === 'end' ? x - width : x;
    return { text, x0, x1: x0 + width, y0: y - size, y1: y };
  });
}

export async function reportHtml(dirs: string[]): Promise<string> {
  const graded = await gradePaths(dirs);
  return renderHtml(graded.results, graded.pairs);
}

/** The verify report of a recorded `termlab verify --sim` run (test/verify/fixtures), as its reports are drawn. */
export async function verifyReportHtml(): Promise<string> {
  const { grade, observation } = await gradeVerificationFile(
    join(repoRoot, 'test/verify/fixtures/rollout-no-prestop.verification.json'),
  );
  return renderVerifyHtml(grade, observation);
}
