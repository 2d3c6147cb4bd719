// The one writer of observation files, of either kind: through the kind's own schema (a file a run
// writes is a file it can read back) and no larger than the readers read (MAX_OBSERVATION_BYTES), which
// is refused here, before anything is written, rather than found by `termlab grade` later.
import { writeFileAtomic } from '../../lib/files.ts';
import { MAX_OBSERVATION_BYTES, type Observation, ObservationSchema } from './schema.ts';
import { isRolloutObservation, type RolloutObservation, RolloutObservationSchema } from './rollout.ts';
import { type EdgeObservation, EdgeObservationSchema, isEdgeObservation } from './edge.ts';

/** The observation as the file holds it; throws a ZodError, or an Error naming the size over the limit. */
function observationText(observation: Observation | RolloutObservation | EdgeObservation): string {
  const valid = isEdgeObservation(observation)
    ? EdgeObservationSchema.parse(observation)
    : isRolloutObservation(observation)
      ? RolloutObservationSchema.parse(observation)
      : ObservationSchema.parse(observation);
  const text = `${JSON.stringify(valid, null, 2)}\n`;
  const bytes = Buffer.byteLength(text);
  if (bytes > MAX_OBSERVATION_BYTES) {
    throw new Error(
      `the observation is ${bytes} bytes, more than the ${MAX_OBSERVATION_BYTES} (${MAX_OBSERVATION_BYTES / 2 ** 20} MiB) an observation file may hold`,
    );
  }
  return text;
}

export async function writeAnyObservation(
  path: string,
  observation: Observation | RolloutObservation | EdgeObservation,
): Promise<void> {
  await writeFileAtomic(path, observationText(observation));
}
