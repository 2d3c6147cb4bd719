import { describe, expect, it } from 'vitest';
import { grade } from '../../harness/grade/grade.ts';
import { renderHtml } from '../../harness/report/html.ts';
import { renderJunit } from '../../harness/report/junit.ts';
import { renderMarkdown } from '../../harness/report/markdown.ts';
import { buildObservation } from '../support/observations.ts';

const hostile = '<script>alert("x")</script>&\'|`';

function hostileResult() {
  const o = buildObservation();
  o.evidence.watchEvents[1]!.uid = hostile; // becomes part of a check's reason
  o.run.runId = hostile;
  o.pod!.uid = `${hostile}-pod`;
  return grade(o, { source: `/tmp/${hostile}.observation.json` });
}

describe('reports', () => {
  it('escapes every untrusted string in HTML', () => {
    const html = renderHtml([hostileResult()], [], [`bad file ${hostile}`]);
    expect(html).not.toContain('<script>');
    expect(html).toContain('&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;');
    expect(html).not.toMatch(/<link|src="http|href="http/);
  });
  it('escapes untrusted strings in JUnit XML and markdown', () => {
    const r = hostileResult();
    const xml = renderJunit([r]);
    expect(xml).not.toContain('<script>');
    expect(renderMarkdown([r])).not.toContain('<script>');
    expect(renderMarkdown([r])).not.toMatch(/[^\\]\|`/);
  });
});
