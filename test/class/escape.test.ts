import { describe, expect, it } from 'vitest';
import { csvCell } from '../../harness/class/escape.ts';
import { escapeTerminal as terminalText } from '../../lib/terminal.ts';

describe('escaping what students wrote', () => {
  it.each([
    ['=1+2', "'=1+2"],
    ['+1', "'+1"],
    ['-cmd', "'-cmd"],
    ['@SUM(A1)', "'@SUM(A1)"],
    ['\tx', "'\tx"],
    ['Ada, "the first"', '"Ada, ""the first"""'],
    ['two\nlines', '"two\nlines"'],
    ['=a,b', `"'=a,b"`],
    ['plain', 'plain'],
  ])('csv cell %j -> %j', (input, cell) => expect(csvCell(input)).toBe(cell));

  it('keeps numbers, negative ones included, as numbers', () => {
    expect(csvCell(-3)).toBe('-3');
    expect(csvCell(null)).toBe('');
  });

  it('shows control characters instead of sending them to the terminal', () => {
    expect(terminalText('a\u001b[31mred\u0007\r\nz\u202e')).toBe('a\\u{1b}[31mred\\u{7}\\u{d}\\u{a}z\\u{202e}');
  });
});
