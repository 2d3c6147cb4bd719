// `termlab schema`: the observation file's JSON Schema.
import { parseArgs } from 'node:util';
import type { Flags } from '../../../lib/command.ts';
import { type Command, parseOptions } from '../command.ts';

/** It takes none. */
const schemaFlags = {} as const satisfies Flags;

export const schema: Command = {
  name: 'schema',
  summary: 'print the JSON Schema of the observation file (termlab schema > docs/observation.schema.json)',
  flags: schemaFlags,
  async run(argv, io) {
    const { values, positionals } = parseArgs({ args: argv, strict: true, options: parseOptions(schemaFlags) });
    return (await import('../../observation/schema-command.ts')).schemaCommand.run(values, positionals, io);
  },
};
