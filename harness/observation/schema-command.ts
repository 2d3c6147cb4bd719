import { z } from 'zod';
import type { CommandModule } from '../../lib/command.ts';
import { ObservationSchema } from './schema.ts';
import { RolloutObservationSchema } from './rollout.ts';

/** The JSON Schema of the observation file (a pod scenario's or a rollout's), derived from the zod schemas: never a hand-written twin. */
function observationJsonSchema(): string {
  return (
    JSON.stringify(
      z.toJSONSchema(z.union([ObservationSchema, RolloutObservationSchema]), { target: 'draft-2020-12', io: 'input' }),
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
