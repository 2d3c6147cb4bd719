// Every string from a submission is untrusted: a student's name, a file name, a reason quoting them.

/** Control characters (escape sequences, newlines) shown as \u{..} so they can never drive a terminal. */
export function terminalText(text: string): string {
  return text.replace(/[\p{Cc}\p{Cf}]/gu, (c) => `\\u{${c.codePointAt(0)!.toString(16)}}`);
}

/** A CSV cell (RFC 4180) that a spreadsheet never runs as a formula. */
export function csvCell(value: string | number | null): string {
  if (value === null) return '';
  let text = String(value);
  if (typeof value === 'string' && /^[=+\-@\t\r]/.test(text)) text = `'${text}`;
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}
