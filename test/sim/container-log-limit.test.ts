// A container's log keeps its last 20,000 lines in order, however many it wrote (the sim drops the older
// ones in batches, not one shift() of the whole array per line).
import { describe, expect, it } from 'vitest';
import { ContainerProcess } from '../../cluster/sim/runtime.ts';

const WRITTEN = 47_123;
const KEPT = 20_000;

describe('container log', () => {
  it('keeps the last 20,000 lines, oldest first, and every line to a follower', async () => {
    const program = `let s = ''; for (let i = 1; i <= ${WRITTEN}; i++) s += 'line ' + i + '\\n'; process.stdout.write(s);`;
    const container = new ContainerProcess([process.execPath, '-e', program], {});
    let followed = 0;
    container.follow((line) => {
      if (line) followed++;
    });
    await container.exited;
    const lines = container.lines.map((l) => l.text);
    expect(lines).toHaveLength(KEPT);
    expect(lines[0]).toBe(`line ${WRITTEN - KEPT + 1}`);
    expect(lines.at(-1)).toBe(`line ${WRITTEN}`);
    expect(lines.every((text, i) => text === `line ${WRITTEN - KEPT + 1 + i}`)).toBe(true);
    expect(followed).toBe(WRITTEN);
  });
});
