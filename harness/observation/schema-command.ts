import { z } from 'zod';
import type { CommandModule } from '../../lib/command.ts';
import { ObservationSchema } from './schema.ts';
import { RolloutObservationSchema } from './rollout.ts';
import { EdgeObservationSchema } from './edge.ts';

/** The JSON Schema of the observation file (a pod scenario's, a rollout's or an edge scenario's), derived from the zod schemas: never a hand-written twin. */
function observationJsonSchema(): string {
  return (
    JSON.stringify(
      z.toJSONSchema(z.union([ObservationSchema, RolloutObservationSchema, EdgeObservationSchema]), {
        target: 'draft-2020-12',
        io: 'input',
      }),
      null,
      2,
    ) + '\n'
  );
}

// The command as the CLI shows and parses it is harness/cli/commands/schema.ts: it takes no flags.
export const schemaCommand: CommandModule<Record<never, never>> = {
  async run(_values, _positionals, io) {
    io.out(observationJsonSchema());
    return 0;
  },
};
