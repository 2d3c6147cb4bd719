// A dev tool for test/dev/entry.test.ts, run as a real process through dev/entry.ts: DEV_TOOL_CASE says
// how it ends, DEV_TOOL_INTERRUPT what Ctrl-C does. It prints each step on stdout, for the test to wait on.
import { setTimeout as sleep } from 'node:timers/promises';
import { devArgs, runDevTool } from '../../dev/entry.ts';
import { TermlabError } from '../../lib/errors.ts';

const tool = {
  name: 'fixture:tool',
  usage: 'npm run fixture:tool -- [--flag]',
  interrupt: (process.env.DEV_TOOL_INTERRUPT ?? 'exit') as 'exit' | 'abort' | 'finish',
  onInterrupt: () => console.log('onInterrupt ran'),
};

await runDevTool(tool, async (signal) => {
  devArgs(tool, { flag: { type: 'boolean' } });
  switch (process.env.DEV_TOOL_CASE) {
    case 'ok':
      console.log('done');
      return;
    case 'setup':
      throw new TermlabError('SETUP_FAILED', 'docker not found on PATH');
    case 'checks':
      throw new TermlabError('CHECKS_FAILED', '2 of 23 scenarios disagree');
    case 'cluster':
      throw new TermlabError('CLUSTER_UNREACHABLE', 'no kubeconfig');
    case 'bug':
      throw new TypeError('a bug in the tool');
    case 'rejection':
      void Promise.reject(new RangeError('a rejection nobody awaited'));
      await sleep(60_000);
      return;
    case 'wait': {
      // A real tool's sockets and children keep it alive while it waits; here a timer does.
      const alive = setInterval(() => {}, 1000);
      console.log('waiting');
      // Stops when asked ('abort'), or goes on to its end whatever ('finish'); 'exit' never gets here.
      try {
        await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
        if (tool.interrupt === 'finish') {
          await sleep(200);
          console.log('finished the work');
          return;
        }
        signal.throwIfAborted();
      } finally {
        clearInterval(alive);
        console.log('cleaned up');
      }
      return;
    }
    case 'stubborn':
      console.log('waiting');
      await sleep(60_000);
      console.log('cleaned up');
      return;
  }
});
