// `--only a,b` is read one way by every command that takes it (run, scenarios, predict).
import { describe, expect, it } from 'vitest';
import { onlyNames } from '../../harness/scenario/load.ts';

describe('--only', () => {
  it('names the scenarios between its commas, trimmed, without empty names', () => {
    expect(onlyNames('short-grace, long-grace ,,')).toEqual(['short-grace', 'long-grace']);
    expect(onlyNames('one')).toEqual(['one']);
  });

  it('means every scenario when it is not given', () => {
    expect(onlyNames(undefined)).toBeUndefined();
  });
});
