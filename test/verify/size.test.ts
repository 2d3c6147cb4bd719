// A verification file is one per run: it is read back within its own limit (not an observation's 16 MiB),
// written with each log line on one line, and a load that could overfill it is refused before anything is made.
import { existsSync, mkdtempSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseVerification, readVerification, writeVerification } from '../../harness/verify/files.ts';
import { checkLoadFits } from '../../harness/verify/size.ts';
import { MAX_OBSERVATION_BYTES } from '../../harness/observation/schema.ts';
import { LOAD_LINE_BYTES, MAX_VERIFICATION_BYTES } from '../../harness/observation/verification.ts';
import { runCli } from '../support/cli.ts';
import { repoRoot } from '../support/processes.ts';

const dir = mkdtempSync(join(tmpdir(), 'termlab-verify-size-'));
const fixture = join(repoRoot, 'test', 'verify', 'fixtures', 'rollout-no-prestop.verification.json');

/** A load line as server/load.ts logs it (requestId, method, latencyMs, reused, bodyHead, dueMono). */
function loadLine(seq: number) {
  const at = (mono: number) => ({ time: new Date(1.8e12 + mono).toISOString(), mono });
  const due = 4000 + seq;
  const text = JSON.stringify({
    event: 'request',
    seq,
    id: `L${seq}`,
    requestId: `termlab-verify-load-d6c3-L${seq}`,
    method: 'GET',
    dueMono: due,
    sent: at(due + 0.25),
    connectedAt: at(due + 0.5),
    headersAt: at(due + 200.75),
    reused: false,
    status: 200,
    bodyHead: null,
    podUid: '662495ac-701c-429a-a68a-5a477a012c3b',
    outcome: 'completed',
    errorCode: null,
    stage: null,
    bytes: 257,
    ended: at(due + 201),
    latencyMs: 201,
  });
  return {
    receivedAt: { mono: due + 202, wall: new Date(1.8e12 + due + 202).toISOString() },
    apiTime: '2026-12-06T19:23:53.307932617Z',
    text,
  };
}

describe('a verification file past an observation’s 16 MiB', () => {
  it('is written compactly and read back whole', async () => {
    const o = parseVerification(JSON.parse(readFileSync(fixture, 'utf8')), fixture);
    const n = 30_000;
    o.evidence.loadLog!.lines = Array.from({ length: n }, (_, i) => loadLine(i + 1));
    // Its load lines alone are more than an observation may hold, however they are written.
    const textBytes = o.evidence.loadLog!.lines.reduce((sum, l) => sum + JSON.stringify(l).length, 0);
    expect(textBytes).toBeGreaterThan(MAX_OBSERVATION_BYTES);

    const path = join(dir, 'web.verification.json');
    const bytes = await writeVerification(path, o);
    expect(await readVerification(path)).toEqual(o);
    expect(bytes).toBe(statSync(path).size);
    // The refusal before a run reckons LOAD_LINE_BYTES a request: a completed one as written fits in it.
    expect(bytes / n).toBeLessThan(LOAD_LINE_BYTES);
    expect(bytes / n).toBeGreaterThan(LOAD_LINE_BYTES * 0.8);
    const text = readFileSync(path, 'utf8');
    // The same JSON as before (any reader of version 1 reads it), each log line on one line of its own.
    expect(JSON.parse(text)).toEqual(JSON.parse(JSON.stringify(o)));
    expect(text).toContain(`\n        ${JSON.stringify(loadLine(n))}\n`);
    expect(text.split('\n').length).toBeLessThan(n + 5_000);
    // Indentation kept where it is read: the top of the file as before.
    expect(text.startsWith('{\n  "schemaVersion": 1,\n  "kind": "termlab.verification",\n')).toBe(true);
  });

  it('past its own limit is refused by name and size', async () => {
    // Only the size is looked at before reading: a sparse file of limit + 1 bytes.
    const path = join(dir, 'huge.verification.json');
    const { open } = await import('node:fs/promises');
    const handle = await open(path, 'w');
    await handle.truncate(MAX_VERIFICATION_BYTES + 1);
    await handle.close();
    await expect(readVerification(path)).rejects.toThrow(
      `${path}: ${MAX_VERIFICATION_BYTES + 1} bytes is larger than the ${MAX_VERIFICATION_BYTES}-byte limit for a verification file`,
    );
  });
});

describe('a load that could overfill its file', () => {
  it('is refused naming --rate, the duration, the figure and a rate that fits', () => {
    // The default bound (progressDeadlineSeconds 600 + grace 30 + 60 s, twice --ready-timeout 120 s, 3 s): 933 s.
    expect(() => checkLoadFits(50, 933_000)).not.toThrow();
    expect(() => checkLoadFits(1000, 933_000)).toThrow(
      /^--rate 1000: the load may run 933 s \(.*\), 933000 requests of ~800 bytes each in the verification file: ~712 MiB, more than the 464 MiB its load lines may take .*nothing was made or changed\. Give --rate 651 or less, or shorten the bound: a lower --ready-timeout, or a lower progressDeadlineSeconds/,
    );
    expect(() => checkLoadFits(651, 933_000)).not.toThrow();
    expect(() => checkLoadFits(652, 933_000)).toThrow(/Give --rate 651 or less/);
  });

  it('termlab verify exits 2 before making anything: no output folder, no load pod', async () => {
    const out = join(dir, 'refused');
    const r = await runCli([
      'verify',
      'deployment/web',
      '--sim',
      '--apply',
      'manifests/verify-example.yaml',
      '--rate',
      '2000',
      '--output-dir',
      out,
    ]);
    expect(r.stderr).toMatch(/--rate 2000: the load may run \d+ s .* Give --rate \d+ or less/);
    expect(r.stderr).not.toMatch(/load starting/);
    expect(r.code).toBe(2);
    expect(existsSync(out)).toBe(false);
  }, 60_000);
});
