// `termlab version`'s flags: the CLI parses with them and shows them in --help (harness/cli/commands/version.ts).
import type { Flags } from '../../lib/command.ts';
import { outputFlag } from '../../lib/output-format.ts';

export const versionFlags = {
  // New with this command: no old spelling to keep.
  output: { ...outputFlag('the versions'), deprecated: [] },
} as const satisfies Flags;
