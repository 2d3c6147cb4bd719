// `termlab schema`: the observation file's JSON Schema.
import type { Command } from '../command.ts';

export const schema: Command = {
  name: 'schema',
  summary: 'print the JSON Schema of the observation file (termlab schema > docs/observation.schema.json)',
  flags: {},
  run: async (argv, io) => (await import('../../observation/schema-command.ts')).schemaCommand.run(argv, io),
};
