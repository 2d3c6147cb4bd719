// Ten students at once on the real node (v1.37.2, 2026-12-02, the machine at load 15-30): two honest runs
// that the grader had called evidence invalid. The kubelet wrote a cut container's status 6.7 s after
// its finishedAt (every log line reached the harness within 0.13 s), and a 3 s hook's sleep ended 1.07 s
// late. Neither is proof of an edit: each is inconclusive, naming both readings, never a match.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { grade } from '../../harness/grade/grade.ts';
import { retryReason } from '../../harness/grade/attempts.ts';
import { strayedFromDesign, tooCloseToDecide } from '../../harness/grade/pairs.ts';
import { parseObservationFile } from '../../harness/observation/read.ts';

const load = (name: string, folder = 'class10-node') => {
  const file = join(import.meta.dirname, 'fixtures', folder, `${name}.observation.json`);
  return parseObservationFile(JSON.parse(readFileSync(file, 'utf8')), file).observation;
};
const check = (o: ReturnType<typeof load>, id: string) => grade(o).checks.find((c) => c.id === id);

describe('a busy real node, graded', () => {
  it('a status the kubelet wrote late: inconclusive, the end not placed from the API times', () => {
    const o = load('late-status.short-grace');
    expect(grade(o).verdict).toBe('inconclusive');
    expect(check(o, 'evidence.api-times')).toMatchObject({
      status: 'inconclusive',
      reason: expect.stringMatching(
        /finishedAt puts the end 7\.0s after the delete \(API times\), but the watch saw it end 13\.7s after it.*reported the end late/,
      ),
    });
  });
  it("a hook that slept late: inconclusive, the hook's end untrusted", () => {
    const o = load('slow-hook.restored-grace');
    expect(grade(o).verdict).toBe('inconclusive');
    expect(check(o, 'evidence.live-lifecycle')).toMatchObject({
      status: 'inconclusive',
      reason: expect.stringMatching(
        /are 4067 ms apart, but the hook's length is 3000 ms.*starved while the hook slept/,
      ),
    });
  });
  it('a TERM the starved kubelet sent 6.9 s after a 3 s hook began (40 students on one sim): inconclusive, not invalid', () => {
    const o = load('late-term.restored-grace', 'class40-sim');
    expect(grade(o).verdict).toBe('inconclusive');
    expect(check(o, 'evidence.kubelet-times')).toMatchObject({
      status: 'inconclusive',
      reason: expect.stringMatching(
        /comes 6\.868s after the hook began .*the kubelet was delayed before TERM \(paused or starved\), or the times were edited/,
      ),
    });
  });
  it('a pair half too close to call (40 students on one sim: the work ended 0.080 s from the kill) is one the runner runs again; a clean half is not', () => {
    const close = grade(load('too-close.short-grace', 'class40-sim'));
    expect(close.verdict).toBe('inconclusive');
    expect(tooCloseToDecide(close)).toBe('could not be called: its work ended within 0.080s of the kill');
    expect(strayedFromDesign(close)).toBeNull();
    const clean = grade(load('late-term.restored-grace', 'class40-sim'));
    expect(tooCloseToDecide(clean)).toBeNull();
  });
  it('a pair half left open by its own times (a kubelet stalled before TERM, a status written late, a hook that slept late) is one the runner runs again, naming the check', () => {
    expect(retryReason(grade(load('late-term.restored-grace', 'class40-sim')))).toMatch(
      /^was inconclusive \([^:]*evidence\.kubelet-times[^:]*: /,
    );
    expect(retryReason(grade(load('late-status.short-grace')))).toMatch(
      /^was inconclusive \([^:]*evidence\.api-times[^:]*: /,
    );
    expect(retryReason(grade(load('slow-hook.restored-grace')))).toMatch(
      /^was inconclusive \([^:]*evidence\.live-lifecycle[^:]*: /,
    );
  });
  it('a half its own times left open is not run again when its run stopped early (Ctrl-C, the API past patience): its grade and exit stand', () => {
    const o = load('slow-hook.restored-grace');
    const stopped = {
      ...o,
      run: { ...o.run, complete: false, incompleteReason: 'interrupted (Ctrl-C) while collecting' },
    } as typeof o;
    const r = grade(stopped);
    expect(r.verdict).toBe('inconclusive');
    expect(r.checks.find((c) => c.id === 'evidence.live-lifecycle')?.status).toBe('inconclusive');
    expect(retryReason(r)).toBeNull();
  });
  it('a half whose grade stands is not run again: matched, or differing from the model', () => {
    const settled = readdirSync(join(import.meta.dirname, 'fixtures', 'node'))
      .filter((f) => f.endsWith('.observation.json'))
      .map((f) => grade(load(f.replace('.observation.json', ''), 'node')))
      .filter((r) => r.verdict !== 'inconclusive');
    expect(settled.length).toBeGreaterThan(0);
    for (const r of settled) expect(retryReason(r), r.source).toBeNull();
  });
});
