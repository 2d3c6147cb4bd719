// `-o/--output text|json|yaml`, kubectl's habit, for a command that prints data: one flag, one printer.
import { stringify } from 'yaml';
import type { Flag } from './command.ts';
import { escapeTerminal, terminalJson } from './terminal.ts';

export const OUTPUT_FORMATS = ['text', 'json', 'yaml'] as const;
export type OutputFormat = (typeof OUTPUT_FORMATS)[number];

/** The flag, `--json` its old spelling; `what` is what the command prints ("the grades"). */
export function outputFlag(what: string) {
  return {
    type: 'string',
    short: 'o',
    value: 'text|json|yaml',
    help: `print ${what} as text (the default), json or yaml`,
    choices: OUTPUT_FORMATS,
    deprecated: [{ flag: '--json', value: 'json' }],
  } as const satisfies Flag;
}

/** JSON or YAML for a terminal, ending in a newline: no control or format character is printed raw. */
export function formatted(value: unknown, format: 'json' | 'yaml'): string {
  if (format === 'json') return `${terminalJson(value)}\n`;
  // yaml quotes and escapes C0 itself; anything else unsafe is shown escaped, line by line.
  return stringify(value, { lineWidth: 0 })
    .split('\n')
    .map((line) => escapeTerminal(line))
    .join('\n');
}

/** Whether the command prints data (json, yaml) rather than its text for a person. */
export const isData = (format: string | undefined): format is 'json' | 'yaml' => format === 'json' || format === 'yaml';
