// Pods with a sidecar proxy, graded (issue 26): the recorded runs of manifests/sidecars.yaml on the
// simulated cluster and on the project's real node (v1.37.2) match the pod model and pass the pair, with the words naming who cut what; a single field of a
// sidecar edited by hand (its exit code or time, in its record, its log or the watch) is evidence invalid.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { gradePaths } from '../../harness/grade/files.ts';
import { grade } from '../../harness/grade/grade.ts';
import type { Observation } from '../../harness/observation/schema.ts';
import { parseObservationFile } from '../../harness/observation/read.ts';
import { repoRoot } from '../support/processes.ts';

const DIR = join(repoRoot, 'test/grade/fixtures/sidecar/sim');
/** Recorded on the real node, Kubernetes v1.37.2 (termlab run --kubeconfig … --scenarios manifests/sidecars.yaml). */
const NODE_DIR = join(repoRoot, 'test/grade/fixtures/sidecar/node');
const recorded = [DIR, NODE_DIR].flatMap((dir) =>
  readdirSync(dir).map(
    (f) => [`${dir.endsWith('node') ? 'node' : 'sim'}: ${f.replace('.observation.json', '')}`, join(dir, f)] as const,
  ),
);
const fixture = (name: string): Observation =>
  parseObservationFile(JSON.parse(readFileSync(join(DIR, `${name}.observation.json`), 'utf8')), name).observation;
const failed = (o: Observation) =>
  grade(o)
    .checks.filter((c) => c.status === 'fail')
    .map((c) => `${c.id}: ${c.reason}`);

/** The proxy's log line of one event, parsed, and a way to write it back. */
function proxyLine(o: Observation, event: string): { json: Record<string, unknown>; save(): void } {
  const lines = o.evidence.containerLogs!.find((l) => l.container === 'proxy')!.lines;
  const i = lines.findIndex((l) => l.text.includes(`"event":"${event}"`) && l.text.includes('"role":"proxy"'));
  const json = JSON.parse(lines[i]!.text) as Record<string, unknown>;
  return {
    json,
    save: () => {
      lines[i]!.text = JSON.stringify(json);
    },
  };
}
const proxyRecord = (o: Observation) => o.containers!.find((c) => c.name === 'proxy')!;

describe('the recorded sidecar runs (simulated cluster) grade as the pod model says', () => {
  it.each(recorded)('%s matches the model', (_name, path) => {
    const g = grade(parseObservationFile(JSON.parse(readFileSync(path, 'utf8')), path).observation);
    expect(g.checks.filter((c) => c.status !== 'pass')).toEqual([]);
    expect(g.verdict).toBe('matches-model');
  });

  it.each([
    ['sim', DIR],
    ['node', NODE_DIR],
  ])('%s: the sidecar pair passes offline, as it did in the run', async (_where, dir) => {
    const run = await gradePaths([dir]);
    expect(run.problems).toEqual([]);
    expect(run.pairs.map((p) => [p.pairId, p.checks.map((c) => c.status)])).toEqual([['sidecar', ['pass']]]);
  });

  it('a pair whose halves are swapped (the native run as proxy-first) fails', async () => {
    const [regular, native] = ['sidecar-regular-proxy', 'sidecar-native-proxy'].map((n) =>
      grade(fixture(n), { source: `x/${n}` }),
    );
    const { gradePairs } = await import('../../harness/grade/pairs.ts');
    const swapped = gradePairs([
      { ...regular!, labPair: { id: 'sidecar', role: 'app-first' } },
      { ...native!, labPair: { id: 'sidecar', role: 'proxy-first' } },
    ]);
    expect(swapped[0]!.checks[0]).toMatchObject({
      status: 'fail',
      reason: expect.stringMatching(/the proxy-first run has no regular-container proxy/),
    });
  });

  it('names who cut what: the regular proxy exiting at TERM, and the app seeing its client go (its `aborted` is no lost path)', () => {
    const g = grade(fixture('sidecar-regular-proxy'));
    expect(g.outcome).toBe('cut');
    expect(g.explanation).toMatch(
      /cut: the proxy \(regular container\) exited 17 at .* while the app was still working; the app saw its client go \(log line \d+ \(aborted\)/,
    );
    expect(g.checks.find((c) => c.id === 'evidence.lost-path')?.status).toBe('pass');
    expect(g.prediction!.pod?.containers.map((c) => [c.name, c.exitCode])).toEqual([
      ['lab', 0],
      ['proxy', 17],
    ]);
  });

  it('the native proxy: TERM after the app is gone, the request completed; with a short grace, the turn comes by the timer and the 2 s minimum', () => {
    expect(
      grade(fixture('sidecar-native-proxy')).checks.find((c) => c.id === 'attribution.termination-order')?.reason,
    ).toMatch(/after the app was gone/);
    const short = grade(fixture('sidecar-native-short-grace'));
    expect(short.checks.find((c) => c.id === 'attribution.termination-order')?.reason).toMatch(
      /grace ran out while it waited .* the 2s minimum/,
    );
    expect(short.prediction!.pod?.containers[1]).toMatchObject({ turnByTimer: true, stopGraceSeconds: 2, exitCode: 0 });
  });
});

describe('tampering with one field of a sidecar', () => {
  it('its exit code in its record', () => {
    const o = fixture('sidecar-regular-proxy');
    proxyRecord(o).finalState!.exitCode = 0;
    expect(grade(o).verdict).toBe('evidence-invalid');
    expect(failed(o)).toEqual([expect.stringMatching(/^evidence.containers-cited: containers.1.finalState \(proxy\)/)]);
  });

  it('its exit time in its record', () => {
    const o = fixture('sidecar-native-proxy');
    const exit = proxyRecord(o).exitLogged!;
    exit.at = { time: new Date(Date.parse(exit.at.time) + 3000).toISOString(), mono: exit.at.mono + 3000 };
    expect(grade(o).verdict).toBe('evidence-invalid');
    expect(failed(o)[0]).toMatch(/^evidence.containers-cited: containers.1.exitLogged/);
  });

  it('the code on its own exit line', () => {
    const o = fixture('sidecar-regular-proxy');
    const exit = proxyLine(o, 'exit');
    exit.json.code = 0;
    exit.save();
    expect(grade(o).verdict).toBe('evidence-invalid');
    expect(failed(o).join('\n')).toMatch(
      /evidence.sidecar-exit: the proxy's log line \d+ \(exit\) says it exited 0, but watch event .* shows 17/,
    );
  });

  it('the wall time on its own exit line', () => {
    const o = fixture('sidecar-native-short-grace');
    const exit = proxyLine(o, 'exit');
    exit.json.time = new Date(Date.parse(String(exit.json.time)) - 2000).toISOString();
    exit.save();
    expect(grade(o).verdict).toBe('evidence-invalid');
    expect(failed(o).join('\n')).toMatch(
      /evidence.sidecar-lines: proxy's log line \d+ \(exit\)'s wall time and monotonic time disagree/,
    );
  });

  it('its exit line moved later on both its clocks, and its record with it', () => {
    const o = fixture('sidecar-native-proxy');
    const exit = proxyLine(o, 'exit');
    exit.json.time = new Date(Date.parse(String(exit.json.time)) + 5000).toISOString();
    exit.json.mono = Number(exit.json.mono) + 5000;
    exit.save();
    const rec = proxyRecord(o).exitLogged!;
    rec.at = { time: String(exit.json.time), mono: Number(exit.json.mono) };
    expect(grade(o).verdict).toBe('evidence-invalid');
    expect(failed(o).join('\n')).toMatch(/after the harness received it|after watch event .* had shown it terminated/);
  });

  it('its exit code in the watch (every event) and its record together: its own exit line still says 17', () => {
    const o = fixture('sidecar-regular-proxy');
    for (const e of o.evidence.watchEvents)
      for (const c of e.containers) if (c.name === 'proxy' && c.state === 'terminated') c.exitCode = 0;
    for (const r of o.evidence.podReads)
      for (const c of r.containers) if (c.name === 'proxy' && c.state === 'terminated') c.exitCode = 0;
    proxyRecord(o).finalState!.exitCode = 0;
    expect(grade(o).verdict).toBe('evidence-invalid');
    expect(failed(o).join('\n')).toMatch(/evidence.sidecar-exit: the proxy's log line \d+ \(exit\) says it exited 17/);
  });

  it('the file without its container records, while the scenario has a sidecar', () => {
    const o = fixture('sidecar-native-proxy');
    delete o.containers;
    expect(failed(o)).toEqual([
      expect.stringMatching(
        /^evidence.containers-cited: the scenario has a sidecar, but the file records no container/,
      ),
    ]);
  });

  it("the proxy's word on the request changed to cut while the client completed it", () => {
    const o = fixture('sidecar-prestop-parallel');
    const done = proxyLine(o, 'upstream-done');
    done.json.outcome = 'cut';
    done.save();
    expect(grade(o).verdict).toBe('evidence-invalid');
    expect(failed(o).join('\n')).toMatch(
      /evidence.request-through-proxy: the request is recorded as completed, but the proxy's log line \d+ \(upstream-done\) says it ended cut/,
    );
  });
});
