// `termlab schema`: the observation file's JSON Schema.
import type { CommandIO, Flags } from '../../../lib/command.ts';
import { type Command, parseFlags } from '../command.ts';

/** It takes none. */
const schemaFlags = {} as const satisfies Flags;

const parse = (argv: string[], io: Pick<CommandIO, 'err'>) => parseFlags('schema', schemaFlags, argv, io);

export const schema: Command = {
  name: 'schema',
  summary: 'print the JSON Schema of the observation file (termlab schema > docs/observation.schema.json)',
  flags: schemaFlags,
  examples: [{ about: 'the schema, into a file', line: 'termlab schema > observation.schema.json' }],
  parse,
  async run(argv, io) {
    const { values, positionals } = parse(argv, io);
    return (await import('../../observation/schema-command.ts')).schemaCommand.run(values, positionals, io);
  },
};
