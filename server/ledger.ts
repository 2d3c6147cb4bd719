// LAB_MODE=ledger: the retries lab's ledger (issue 27). The lab server's work calls it at its effect
// point (LAB_EFFECT); it records each effect with the request id, the idempotency key if the request
// carried one, the pod that asked and the time, and answers applied, or already-applied for a key it
// has seen. Its log is the record the run collects: one line per effect, in the order applied.
// Its own termination is not part of any scenario: on TERM it logs and exits 0 at once.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { LedgerConfig } from './config.ts';
import { LEDGER_PATHS, type LedgerResult } from './contract.ts';
import type { LogLedgerEvent } from './events.ts';
import { listenOn, sendJson } from './http.ts';
import { parseRequestId } from './work.ts';

interface LedgerRecord {
  seq: number;
  id: string;
  key: string | null;
  fromPodUid: string | null;
  fromPodName: string | null;
  point: 'start' | 'end';
  time: string;
}

/** An effect as posted: the app's request id, the client's key, the app's pod, the point in the work. */
interface EffectBody {
  id: string;
  key: string | null;
  podUid: string | null;
  podName: string | null;
  point: 'start' | 'end';
}

const BODY_LIMIT = 4096;
const KEY = /^[\x21-\x7e]{1,128}$/;

const optionalString = (v: unknown, max: number): v is string | null | undefined =>
  v === undefined || v === null || (typeof v === 'string' && v.length <= max);

/** The posted JSON, or the field that is wrong. */
function parseEffectBody(
  text: string,
): { ok: true; value: EffectBody } | { ok: false; field: string; message: string } {
  let json: Record<string, unknown>;
  try {
    json = JSON.parse(text);
  } catch {
    return { ok: false, field: '(body)', message: 'not JSON' };
  }
  if (!json || typeof json !== 'object' || Array.isArray(json))
    return { ok: false, field: '(body)', message: 'expected an object' };
  const id = parseRequestId(typeof json.id === 'string' ? json.id : '', () => '');
  if (!id.ok || !id.value)
    return { ok: false, field: 'id', message: 'id must be 1-64 characters of A-Z a-z 0-9 . _ -' };
  if (json.key !== undefined && json.key !== null && (typeof json.key !== 'string' || !KEY.test(json.key)))
    return { ok: false, field: 'key', message: 'key must be 1-128 printable ASCII characters, or null' };
  if (!optionalString(json.podUid, 128))
    return { ok: false, field: 'podUid', message: 'podUid must be a string of at most 128 characters, or null' };
  if (!optionalString(json.podName, 253))
    return { ok: false, field: 'podName', message: 'podName must be a string of at most 253 characters, or null' };
  if (json.point !== 'start' && json.point !== 'end')
    return { ok: false, field: 'point', message: 'point must be start or end' };
  return {
    ok: true,
    value: {
      id: id.value,
      key: (json.key as string | null | undefined) ?? null,
      podUid: (json.podUid as string | null | undefined) ?? null,
      podName: (json.podName as string | null | undefined) ?? null,
      point: json.point,
    },
  };
}

export function createLedger(config: LedgerConfig, logEvent: LogLedgerEvent, exit: (code: number) => void) {
  const records: LedgerRecord[] = [];
  // A key's first record: a later effect with the same key is answered with it and records nothing.
  const byKey = new Map<string, LedgerRecord>();
  let exited = false;

  function apply(body: EffectBody): { result: LedgerResult; seq: number } {
    const first = body.key === null ? undefined : byKey.get(body.key);
    const fields = {
      id: body.id,
      key: body.key,
      fromPodUid: body.podUid,
      fromPodName: body.podName,
      point: body.point,
    };
    if (first) {
      logEvent('already-applied', { seq: first.seq, ...fields });
      return { result: 'already-applied', seq: first.seq };
    }
    const record: LedgerRecord = { seq: records.length + 1, ...fields, time: new Date().toISOString() };
    records.push(record);
    if (body.key !== null) byKey.set(body.key, record);
    logEvent('applied', { seq: record.seq, ...fields });
    return { result: 'applied', seq: record.seq };
  }

  function handleEffect(req: IncomingMessage, res: ServerResponse): void {
    let text = '';
    let tooLong = false;
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => {
      text += chunk;
      if (text.length > BODY_LIMIT) {
        tooLong = true;
        req.destroy();
      }
    });
    req.on('end', () => {
      if (tooLong) return;
      const body = parseEffectBody(text);
      if (!body.ok) return sendJson(res, 400, { error: body.message, field: body.field });
      sendJson(res, 200, apply(body.value));
    });
  }

  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://ledger.invalid');
    if (url.pathname === LEDGER_PATHS.effect && req.method === 'POST') return handleEffect(req, res);
    if (req.method !== 'GET')
      return sendJson(res, 405, { error: `method ${req.method} not allowed on ${url.pathname}` });
    switch (url.pathname) {
      case LEDGER_PATHS.records:
        return sendJson(res, 200, { records });
      case '/readyz':
      case '/healthz':
        return sendJson(res, 200, { ready: true, records: records.length });
      default:
        return sendJson(res, 404, { error: `no such path ${url.pathname}` });
    }
  });

  const listen = () =>
    listenOn(server, config.port, config.host, (address) =>
      logEvent('listening', { host: address.address, port: address.port }),
    );

  function terminate(signal: NodeJS.Signals): void {
    if (exited) return;
    exited = true;
    logEvent('signal', { signal });
    logEvent('exit', { code: 0, records: records.length });
    exit(0);
  }

  return { server, records, listen, terminate };
}
