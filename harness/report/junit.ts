// JUnit XML: a testsuite per observation, a testcase per check; pod UID and times as properties.
import type { Check, GradeResult, PairResult } from '../grade/types.ts';
import { escapeXml as x } from './format.ts';

function testcase(classname: string, check: Check, properties: Record<string, string | null>): string {
  const props = Object.entries(properties)
    .filter(([, v]) => v !== null)
    .map(([k, v]) => `<property name="${x(k)}" value="${x(v)}"/>`)
    .join('');
  const body =
    check.status === 'pass'
      ? ''
      : `<failure type="${check.status}" message="${x(check.reason)}">${x(check.reason)}</failure>`;
  return `    <testcase classname="${x(classname)}" name="${x(check.id)}"><properties>${props}</properties>${body}</testcase>`;
}

export function renderJunit(results: GradeResult[], pairs: PairResult[] = []): string {
  const suites: string[] = [];
  let tests = 0,
    failures = 0;
  for (const r of results) {
    const bad = r.checks.filter((c) => c.status !== 'pass').length;
    tests += r.checks.length;
    failures += bad;
    const uid: Record<string, string | null> =
      r.kind === 'pod' ? { podUid: r.podUid } : { deploymentUid: r.deploymentUid };
    const properties = {
      ...uid,
      runId: r.runId,
      observedAt: r.observedAt,
      deleteIssuedAt: r.deleteWall,
      verdict: r.verdict,
      source: r.source,
    };
    suites.push(
      `  <testsuite name="${x(r.scenario)}" tests="${r.checks.length}" failures="${bad}" errors="0" timestamp="${x(r.observedAt)}">`,
      `    <properties>${Object.entries(properties)
        .filter(([, v]) => v)
        .map(([k, v]) => `<property name="${k}" value="${x(v)}"/>`)
        .join('')}</properties>`,
      ...r.checks.map((c) => testcase(`termlab.${r.scenario}`, c, { ...uid, deleteIssuedAt: r.deleteWall })),
      '  </testsuite>',
    );
  }
  for (const p of pairs) {
    const bad = p.checks.filter((c) => c.status !== 'pass').length;
    tests += p.checks.length;
    failures += bad;
    suites.push(
      `  <testsuite name="pair ${x(p.pairId)}" tests="${p.checks.length}" failures="${bad}" errors="0">`,
      ...p.checks.map((c) => testcase(`termlab.pair.${p.pairId}`, c, {})),
      '  </testsuite>',
    );
  }
  return `<?xml version="1.0" encoding="UTF-8"?>\n<testsuites name="termlab" tests="${tests}" failures="${failures}">\n${suites.join('\n')}\n</testsuites>\n`;
}
