import { describe, expect, it } from 'vitest';
import { wallMs } from '../../harness/grade/wall-time.ts';

describe('wallMs gives exactly what Date.parse gives', () => {
  it("for toISOString's own form, across years, leap days and the day's edges", () => {
    const from = Date.UTC(1970, 0, 1),
      to = Date.UTC(2400, 0, 1);
    let seed = 7;
    const next = () => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed / 2 ** 31;
    };
    for (let i = 0; i < 20_000; i++) {
      const text = new Date(from + Math.floor(next() * (to - from))).toISOString();
      expect(wallMs(text), text).toBe(Date.parse(text));
    }
  });

  it('for what is no date or another form, which it leaves to Date.parse', () => {
    const texts = [
      '2024-02-29T00:00:00.000Z',
      '2023-02-29T00:00:00.000Z',
      '2100-02-29T12:00:00.000Z',
      '2000-02-29T23:59:59.999Z',
      '2026-04-31T10:00:00.000Z',
      '2026-12-31T23:59:59.999Z',
      '2026-13-01T00:00:00.000Z',
      '2026-00-10T00:00:00.000Z',
      '2026-11-30T24:00:00.000Z',
      '2026-11-30T10:60:00.000Z',
      '2026-11-30T10:00:60.000Z',
      '1969-12-31T23:59:59.999Z',
      '0099-01-01T00:00:00.000Z',
      '2026-11-30T10:00:02.262z',
      '2026-11-30T10:00:02Z',
      '2026-11-30T10:00:02.262+01:00',
      '2026-11-30 10:00:02.262Z',
      '2026-11-3aT10:00:02.262Z',
      '+02026-11-30T10:00:02Z',
      '',
      'not a time',
      '2026-11-30T10:00:02.2620',
    ];
    for (const text of texts) expect(wallMs(text), text).toBe(Date.parse(text));
  });
});
