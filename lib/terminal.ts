// Text from a file, a submission or a user on a terminal: control and format characters (ESC, CR,
// LF, OSC 8 links, bidi overrides, zero-width marks) and line separators are shown escaped as
// \u{..}, never obeyed. The one terminal escaper: reports, messages and the class's names use it.
const UNSAFE = /[\p{Cc}\p{Cf}\u2028\u2029]/gu;

export function escapeTerminal(value: unknown): string {
  return String(value).replace(UNSAFE, (c) => `\\u{${c.codePointAt(0)!.toString(16)}}`);
}

/** Text from a file in a message: escaped, and never more than a line's worth. */
export function oneLine(text: string, max = 200): string {
  const flat = escapeTerminal(text);
  return flat.length > max ? `${flat.slice(0, max)}…` : flat;
}

/** JSON for a terminal: JSON.stringify leaves C1 and format characters and line separators raw; they become \uXXXX (still JSON). */
export function terminalJson(value: unknown): string {
  // JSON.stringify has escaped C0 inside strings, so a raw newline is its own layout; each UTF-16 unit of
  // anything else unsafe becomes its \uXXXX.
  return JSON.stringify(value, null, 2).replace(UNSAFE, (c) =>
    c === '\n'
      ? c
      : c
          .split('')
          .map((unit) => `\\u${unit.charCodeAt(0).toString(16).padStart(4, '0')}`)
          .join(''),
  );
}
