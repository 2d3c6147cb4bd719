// Every string from a submission is untrusted: a student's name, a file name, a reason quoting them.
// On a terminal it goes through lib/terminal.ts escapeTerminal; in a CSV through csvCell.

/** A CSV cell (RFC 4180) that a spreadsheet never runs as a formula. */
export function csvCell(value: string | number | null): string {
  if (value === null) return '';
  let text = String(value);
  if (typeof value === 'string' && /^[=+\-@\t\r]/.test(text)) text = `'${text}`;
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}
