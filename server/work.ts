// Query parsing for the server's endpoints: junk is a 400 that names the parameter.
export const WORK_MS_MIN = 1;
export const WORK_MS_MAX = 10 * 60 * 1000;
const REQUEST_ID = /^[A-Za-z0-9._-]{1,64}$/;

export type Parsed<T> = { ok: true; value: T } | { ok: false; parameter: string; message: string };

export function parseMs(raw: string | null, min: number, max: number): Parsed<number> {
  if (raw === null) return { ok: false, parameter: 'ms', message: 'ms is required' };
  if (!/^\d+$/.test(raw))
    return {
      ok: false,
      parameter: 'ms',
      message: `ms must be a whole number of milliseconds, got ${JSON.stringify(raw.slice(0, 40))}`,
    };
  const ms = Number(raw);
  if (ms < min || ms > max)
    return { ok: false, parameter: 'ms', message: `ms must be between ${min} and ${max}, got ${ms}` };
  return { ok: true, value: ms };
}

export function parseRequestId(raw: string | null, fallback: () => string): Parsed<string> {
  if (raw === null) return { ok: true, value: fallback() };
  if (!REQUEST_ID.test(raw))
    return { ok: false, parameter: 'id', message: 'id must be 1-64 characters of A-Z a-z 0-9 . _ -' };
  return { ok: true, value: raw };
}
