// A simulated node's host ports reserved in a process of its own, as a test file beside another's or a
// second `termlab run --sim` reserves them: prints them as one JSON line, then holds them until killed.
import { NodePorts } from '../../cluster/sim/ports.ts';

const count = Number(process.argv[2]);
const node = new NodePorts();
const ports = await Promise.all(Array.from({ length: count }, () => node.reserve()));
process.stdout.write(
  `${JSON.stringify({ event: 'held', time: new Date().toISOString(), mono: performance.now(), ports })}\n`,
);
setInterval(() => {}, 1 << 30);
