// A pod is graded with the kubelet's reaction windows of the minor its cluster runs, not the newest
// minor's (the exit code's window after the kill, and the deadline's sync before the kill). Every minor
// has the same windows today, so 1.35's entry is changed for the length of a test and restored: a
// window of the newest minor's taken instead leaves the grade as it was.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { grade } from '../../harness/grade/grade.ts';
import { type KubeletRules, NEWEST_MINOR, RULES_BY_MINOR } from '../../harness/grade/theory.ts';
import { parseObservationFile } from '../../harness/observation/read.ts';

const load = (folder: string, name: string, serverVersion: string) => {
  const file = join(import.meta.dirname, 'fixtures', folder, `${name}.observation.json`);
  const o = parseObservationFile(JSON.parse(readFileSync(file, 'utf8')), file).observation;
  o.run.cluster.serverVersion = serverVersion;
  return o;
};
const statusOf = (o: ReturnType<typeof load>, id: string) => grade(o).checks.find((c) => c.id === id)!;

const rules135 = RULES_BY_MINOR.get('1.35')! as KubeletRules;
const saved = { ...rules135 };
afterEach(() => {
  Object.assign(rules135, saved);
});

describe("a pod is graded with the reaction windows of its cluster's minor", () => {
  it("a 137 that ended late on a busy node: inside the window of a 1.35 kubelet's slower reaction, outside the newest's", () => {
    // The real node (1.37.2, ten students at once): the harness saw the end 13.7 s after the delete, the
    // grace ran out at 6.6 s; the window allows the kubelet's reaction (2 s) and its extra delay (2 s) and a second.
    expect(NEWEST_MINOR).not.toBe('1.35');
    expect(statusOf(load('class10-node', 'late-status.short-grace', 'v1.35.4'), 'attribution.exit-code')).toMatchObject(
      {
        status: 'inconclusive',
        reason: expect.stringMatching(/ended 13\.7s after the delete by harness clock.*window .*–11\.5\d+s/),
      },
    );
    rules135.kubeletReactionSeconds = 5;
    expect(statusOf(load('class10-node', 'late-status.short-grace', 'v1.35.4'), 'attribution.exit-code').status).toBe(
      'pass',
    );
    // The same file on the newest minor keeps the newest's window.
    expect(
      statusOf(load('class10-node', 'late-status.short-grace', `v${NEWEST_MINOR}.0`), 'attribution.exit-code').status,
    ).toBe('inconclusive');
  });

  it("the deadline's kill 1.4 s after the deadline passed: within a 1.35 kubelet's sync and relist, unless 1.35's were instant", () => {
    const o = () => load('deadline', 'node-deadline-runs-out', 'v1.35.4');
    expect(statusOf(o(), 'evidence.kubelet-times').status).toBe('pass');
    rules135.deadlineReactionSeconds = 0;
    expect(statusOf(o(), 'evidence.kubelet-times')).toMatchObject({
      status: 'inconclusive',
      reason: expect.stringMatching(/after the pod's active deadline passed .*sync ticker and relist \(0s\)/),
    });
  });
});
