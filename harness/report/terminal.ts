// Text from an observation on a terminal: control characters (ESC, CR, OSC 8 links, bidi
// overrides) are shown escaped, never obeyed.
const UNSAFE = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

export function escapeTerminal(value: unknown): string {
  return String(value).replace(UNSAFE, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`).replace(/\n/g, '\\n').replace(/\t/g, '\\t');
}

/** JSON for a terminal: JSON.stringify leaves C1 controls, line separators and bidi overrides raw. */
export function terminalJson(value: unknown): string {
  return JSON.stringify(value, null, 2).replace(/[\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}
