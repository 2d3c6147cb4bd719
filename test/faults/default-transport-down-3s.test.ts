// The node's fault matrix (dev/node/faults.ts) on the simulated cluster, on the default transport
// (portforward): the API server dies for 3 s at three points — right after the delete was answered, while
// the hook runs, after TERM. Every try matches the model or is inconclusive with its cause; never differs,
// never evidence invalid; the last try matches; nothing is left. (test/support/fault-pair.ts runs the pair.)
import { describeApiOutage } from '../support/fault-pair.ts';

describeApiOutage(3);
