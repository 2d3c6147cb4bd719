// The retries lab's ledger (LAB_MODE=ledger) and the lab server's effect point (LAB_EFFECT): real
// processes on real sockets; a request cut by SIGKILL after its effect, and the same work again.
import { request } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { parseLabLine, parseLedgerLine } from '../../server/contract-schemas.ts';
import { getJson, readLines, startLabServer, type LabProcess } from '../support/labServer.ts';
import { spawnTs, type EventedProcess } from '../support/processes.ts';

const started: EventedProcess[] = [];
afterEach(() => {
  for (const proc of started.splice(0))
    if (proc.child.exitCode === null && proc.child.signalCode === null) proc.child.kill('SIGKILL');
});

async function startLedger(env: NodeJS.ProcessEnv = {}): Promise<LabProcess> {
  const proc = spawnTs('server/main.ts', ['--port', '0', '--host', '127.0.0.1'], {
    LAB_MODE: 'ledger',
    POD_UID: 'uid-ledger',
    ...env,
  });
  started.push(proc);
  const listening = await proc.waitForEvent((e) => e.event === 'listening', 'the ledger listening');
  return { ...proc, port: listening.port as number, base: `http://127.0.0.1:${listening.port}` };
}

async function app(ledger: LabProcess, point: 'start' | 'end', uid: string): Promise<LabProcess> {
  const proc = await startLabServer('graceful', {
    POD_UID: uid,
    POD_NAME: `pod-${uid}`,
    LAB_EFFECT: point,
    LAB_LEDGER_URL: ledger.base,
  });
  started.push(proc);
  return proc;
}

const post = async (base: string, body: unknown) => {
  const res = await request(`${base}/effect`, {
    method: 'POST',
    body: JSON.stringify(body),
    headers: { 'content-type': 'application/json' },
  });
  return { status: res.statusCode, body: (await res.body.json()) as Record<string, unknown> };
};

function ledgerEvents(ledger: LabProcess): string[] {
  return ledger.rawLines.map((text) => {
    const parsed = parseLedgerLine(JSON.parse(text));
    expect(parsed, text).toMatchObject({ kind: 'event' });
    return (parsed as { event: string }).event;
  });
}

describe('ledger mode', () => {
  it('records each effect and applies a key once, answering the second already-applied', async () => {
    const ledger = await startLedger();
    expect(await post(ledger.base, { id: 'a1', key: null, podUid: 'A', podName: 'pa', point: 'start' })).toEqual({
      status: 200,
      body: { result: 'applied', seq: 1 },
    });
    expect(await post(ledger.base, { id: 'a2', key: null, podUid: 'B', podName: 'pb', point: 'start' })).toEqual({
      status: 200,
      body: { result: 'applied', seq: 2 },
    });
    expect(await post(ledger.base, { id: 'k1', key: 'order-7', podUid: 'A', podName: 'pa', point: 'start' })).toEqual({
      status: 200,
      body: { result: 'applied', seq: 3 },
    });
    expect(await post(ledger.base, { id: 'k2', key: 'order-7', podUid: 'B', podName: 'pb', point: 'start' })).toEqual({
      status: 200,
      body: { result: 'already-applied', seq: 3 },
    });
    const { body } = await getJson(`${ledger.base}/records`);
    expect((body.records as { id: string }[]).map((r) => r.id)).toEqual(['a1', 'a2', 'k1']);
    await ledger.waitForEvent((e) => e.event === 'already-applied', 'already-applied');
    expect(ledgerEvents(ledger)).toEqual(['listening', 'applied', 'applied', 'applied', 'already-applied']);
    expect(ledger.events[4]).toMatchObject({
      role: 'ledger',
      seq: 3,
      id: 'k2',
      key: 'order-7',
      fromPodUid: 'B',
      fromPodName: 'pb',
      podUid: 'uid-ledger',
    });
  });

  it('refuses a bad effect naming the field, and exits 0 on TERM saying how many it kept', async () => {
    const ledger = await startLedger();
    expect(await post(ledger.base, { id: 'x', point: 'middle' })).toEqual({
      status: 400,
      body: { error: 'point must be start or end', field: 'point' },
    });
    expect((await post(ledger.base, { id: 'bad id', point: 'start' })).body.field).toBe('id');
    expect((await post(ledger.base, { id: 'x', key: 7, point: 'start' })).body.field).toBe('key');
    await post(ledger.base, { id: 'x', point: 'end' });
    ledger.child.kill('SIGTERM');
    expect(await ledger.exited).toEqual({ code: 0, signal: null });
    expect(ledger.events.at(-1)).toMatchObject({ event: 'exit', code: 0, records: 1, role: 'ledger' });
  });

  it('names a bad LAB_EFFECT or a missing LAB_LEDGER_URL and exits 2', async () => {
    for (const [env, named] of [
      [{ LAB_EFFECT: 'middle' }, 'LAB_EFFECT'],
      [{ LAB_EFFECT: 'start' }, 'LAB_LEDGER_URL'],
    ] as const) {
      const proc = spawnTs('server/main.ts', ['--port', '0'], { LAB_MODE: 'graceful', ...env, LAB_LEDGER_URL: '' });
      started.push(proc);
      expect(await proc.exited).toEqual({ code: 2, signal: null });
      expect(proc.stderr()).toContain(named);
    }
  });
});

describe('the effect point', () => {
  it('at start: the effect is made at once, and a SIGKILL later leaves it made; the same work on another pod makes it again', async () => {
    const ledger = await startLedger();
    const a = await app(ledger, 'start', 'A');
    const res = await request(`${a.base}/work?ms=60000&id=try-1`);
    const cut = readLines(res.body);
    const effect = await a.waitForEvent((e) => e.event === 'effect', 'the effect line');
    expect(parseLabLine(effect)).toMatchObject({
      kind: 'event',
      line: { id: 'try-1', key: null, point: 'start', result: 'applied', seq: 1 },
    });
    a.child.kill('SIGKILL');
    expect((await cut).error).not.toBeNull();

    const b = await app(ledger, 'start', 'B');
    const again = await request(`${b.base}/work?ms=200&id=try-2`);
    expect((await readLines(again.body)).lines.at(-1)).toMatchObject({ event: 'done' });
    await b.waitForEvent((e) => e.event === 'effect', "the retry's effect");
    await ledger.waitForEvent((e) => e.event === 'applied' && e.seq === 2, 'the second record');
    expect(ledger.events.filter((e) => e.event === 'applied').map((e) => [e.id, e.fromPodUid])).toEqual([
      ['try-1', 'A'],
      ['try-2', 'B'],
    ]);
  });

  it('with an idempotency key the retry is already-applied; at end a cut request never reached the effect', async () => {
    const ledger = await startLedger();
    const a = await app(ledger, 'start', 'A');
    const first = await request(`${a.base}/work?ms=60000&id=k-1`, { headers: { 'idempotency-key': 'order-9' } });
    const firstBody = readLines(first.body);
    await a.waitForEvent((e) => e.event === 'effect', 'the effect line');
    a.child.kill('SIGKILL');
    await firstBody;
    const b = await app(ledger, 'start', 'B');
    const second = await request(`${b.base}/work?ms=200&id=k-2`, { headers: { 'idempotency-key': 'order-9' } });
    await readLines(second.body);
    const retried = await b.waitForEvent((e) => e.event === 'effect', "the retry's effect");
    expect(retried).toMatchObject({ id: 'k-2', key: 'order-9', result: 'already-applied', seq: 1 });

    const atEnd = await app(ledger, 'end', 'C');
    const cutBeforeEnd = await request(`${atEnd.base}/work?ms=60000&id=e-1`);
    const cutBody = readLines(cutBeforeEnd.body);
    await atEnd.waitForEvent((e) => e.event === 'accepted', 'accepted');
    atEnd.child.kill('SIGKILL');
    await cutBody;
    const whole = await app(ledger, 'end', 'D');
    const done = await request(`${whole.base}/work?ms=200&id=e-2`);
    const { lines } = await readLines(done.body);
    expect(lines.at(-1)).toMatchObject({ event: 'done', id: 'e-2' });
    // The done line came after the effect: the ledger's line is already written.
    await ledger.waitForEvent((e) => e.event === 'applied' && e.id === 'e-2', 'the at-end effect');
    expect(atEnd.events.some((e) => e.event === 'effect')).toBe(false);
    expect(ledger.events.filter((e) => e.event === 'applied').map((e) => e.id)).toEqual(['k-1', 'e-2']);
  });

  it('a ledger that is not there: the effect is logged failed and the work still completes', async () => {
    const proc = await startLabServer('graceful', { LAB_EFFECT: 'end', LAB_LEDGER_URL: 'http://127.0.0.1:1' });
    started.push(proc);
    const res = await request(`${proc.base}/work?ms=100&id=n-1`);
    expect((await readLines(res.body)).lines.at(-1)).toMatchObject({ event: 'done' });
    expect(proc.events.find((e) => e.event === 'effect')).toMatchObject({
      id: 'n-1',
      result: 'failed',
      seq: null,
      error: 'ECONNREFUSED',
    });
  });
});
