// The server's allocation on TERM (LAB_TERM_ALLOCATE_MIB, server/app.ts) against the scenario: the
// model's memory kill (theory.ts memoryKillAfterTerm) rests on its size and pace, so each is held
// against the server's own `allocating` line.
import { LAB_TERM_ALLOCATE_MIB_PER_SECOND } from '../../server/contract.ts';
import { oneLine } from '../../lib/terminal.ts';
import { describeLine } from './sources.ts';
import { fail, pass, type Check } from './types.ts';
import type { Facts } from './facts.ts';
import { wallMs } from './wall-time.ts';

export function memoryEvidence(f: Facts): Check {
  const id = 'evidence.memory';
  const lines = f.lab.filter((l) => l.event === 'allocating');
  const asked = f.o.scenario.termAllocateMiB ?? 0;
  const term = f.lab.find((l) => l.event === 'signal');
  if (lines.length > 1)
    return fail(
      id,
      `the server logged its allocation twice (${describeLine(lines[0]!)}, ${describeLine(lines[1]!)}), but it allocates once, on the first TERM`,
    );
  const line = lines[0];
  if (!line) {
    if (asked > 0 && term && f.logComplete)
      return fail(
        id,
        `the scenario has the server allocate ${asked} MiB on TERM, but its complete log has no allocating line after ${describeLine(term)}`,
      );
    return pass(
      id,
      asked > 0
        ? 'no TERM, or not all the log: no allocation to compare'
        : 'the scenario allocates nothing on TERM, and the server logged no allocation',
    );
  }
  const mib = (line.fields as Record<string, unknown>).mib,
    pace = (line.fields as Record<string, unknown>).mibPerSecond;
  if (asked === 0)
    return fail(
      id,
      `${describeLine(line)} has the server allocating, but the scenario gives it nothing to allocate on TERM`,
    );
  if (mib !== asked)
    return fail(
      id,
      `${describeLine(line)} says the server allocated ${oneLine(String(mib))} MiB, the scenario ${asked} MiB`,
    );
  if (pace !== LAB_TERM_ALLOCATE_MIB_PER_SECOND)
    return fail(
      id,
      `${describeLine(line)} says ${oneLine(String(pace))} MiB a second, but the lab server allocates ${LAB_TERM_ALLOCATE_MIB_PER_SECOND}`,
    );
  if (
    !term ||
    wallMs(line.time) < wallMs(term.time) ||
    (term.fields.pid !== undefined && line.fields.pid !== term.fields.pid)
  )
    return fail(
      id,
      `${describeLine(line)} is not the TERM's: the server allocates only after its first TERM line, in the same process`,
    );
  return pass(
    id,
    `${describeLine(line)}: ${asked} MiB at ${LAB_TERM_ALLOCATE_MIB_PER_SECOND} MiB/s after TERM, as the scenario says`,
  );
}
