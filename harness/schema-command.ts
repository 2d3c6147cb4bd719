import { z } from 'zod';
import type { Command } from './command.ts';
import { ObservationSchema } from './observation.ts';
import { RolloutObservationSchema } from './observation-rollout.ts';

/** The JSON Schema of the observation file (a pod scenario's or a rollout's), derived from the zod schemas: never a hand-written twin. */
export function observationJsonSchema(): string {
  return JSON.stringify(z.toJSONSchema(z.union([ObservationSchema, RolloutObservationSchema]), { target: 'draft-2020-12', io: 'input' }), null, 2) + '\n';
}

export const schemaCommand: Command = {
  name: 'schema',
  summary: 'print the JSON Schema of the observation file',
  usage: 'termlab schema > docs/observation.schema.json',
  async run(_argv, io) {
    io.out(observationJsonSchema());
    return 0;
  },
};
