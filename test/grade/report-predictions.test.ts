// The student's prediction sits beside each verdict, with a count, not only inside the checks.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { gradePaths } from '../../harness/grade/files.ts';
import { parsePredictions } from '../../harness/grade/predictions.ts';
import { renderHtml } from '../../harness/report/html.ts';
import { renderMarkdown } from '../../harness/report/markdown.ts';
import { writeRunDir } from '../class/fixtures.ts';

describe('predictions in the reports', () => {
  it('shows each prediction and whether it was right next to the verdict, and counts them', async () => {
    const dir = writeRunDir(mkdtempSync(join(tmpdir(), 'termlab-predrep-')), {
      student: 'Ada',
      tag: 'ada',
      sealed: false,
    });
    const predictions = parsePredictions(
      'student: Ada\npredictions:\n  short-grace: { outcome: completed, exitCode: 0 }\n  restored-grace: { outcome: completed, exitCode: 0 }\n',
      'p.yaml',
    );
    const run = await gradePaths([dir], { predictions });
    const html = renderHtml(run.results, run.pairs);
    expect(html).toContain('<strong>predictions: 1 of 2 right</strong>');
    expect(html).toContain('<th>your prediction</th>');
    expect(html).toMatch(
      /<h2>short-grace <span class="badge b-matches-model">[^<]*<\/span> <span class="badge b-differs-from-model" title="your prediction">prediction ✗ completed\/0 — the model says cut\/137<\/span><\/h2>/,
    );
    expect(html).toMatch(/<h2>restored-grace .*prediction ✓ completed\/0<\/span><\/h2>/);
    const md = renderMarkdown(run.results, run.pairs);
    expect(md).toContain('**predictions: 1 of 2 right**');
    expect(md).toMatch(/\| short-grace \|.*\| ✗ completed\/0 — the model says cut\/137 \|/);
    // Without predictions, no column and no count.
    const bare = await gradePaths([dir]);
    expect(renderHtml(bare.results)).not.toContain('your prediction');
  });
});
