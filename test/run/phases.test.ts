// The one frame every kind of run takes (harness/run/phases.ts), here with a verification's context and
// phases: a failure recorded, never thrown, its code kept; the follows stopped, then the cleaner run newest
// first, then the watches settled; a run whose cleanup failed never complete; Ctrl-C named with its phase.
import { describe, expect, it } from 'vitest';
import { TermlabError } from '../../lib/errors.ts';
import type { Observation } from '../../harness/observation/schema.ts';
import { Cleaner } from '../../harness/run/cleaner.ts';
import { RunClock } from '../../harness/run/clock.ts';
import { type FrameContext, runPhases } from '../../harness/run/phases.ts';
import type { VerifyPhase } from '../../harness/verify/run.ts';

function frame(signal = new AbortController().signal) {
  const said: string[] = [];
  const failures: TermlabError[] = [];
  const clock = new RunClock();
  const ctx: FrameContext<VerifyPhase> & { deployment: string } = {
    clock,
    signal,
    deployment: 'web',
    onPhase: (phase, detail) => said.push(detail === undefined ? phase : `${phase}: ${detail}`),
    onFailure: (error) => failures.push(error),
  };
  const run = { complete: false, observedAt: '' } as Observation['run'];
  const cleaner = new Cleaner(clock);
  const hooks = {
    onError: async (error: unknown) => void said.push(`evidence of ${(error as Error).message}`),
    beforeCleanup: () => void said.push('follows stopped'),
    afterCleanup: async () => void said.push('watches settled'),
  };
  cleaner.defer('delete temporary service', async () => {
    said.push('service deleted');
    return 'done';
  });
  return { said, failures, ctx, run, cleaner, hooks };
}

describe('the frame of a run', () => {
  it('a run that went through: complete, its context handed on, cleaned newest first between the hooks', async () => {
    const f = frame();
    const cleanup = await runPhases<VerifyPhase, typeof f.ctx>(
      f.ctx,
      f.run,
      f.cleaner,
      async ({ onPhase, deployment }) => {
        onPhase('watching');
        f.cleaner.defer(`delete load pod of ${deployment}`, async () => {
          f.said.push('load pod deleted');
          return 'gone';
        });
        onPhase('acting');
      },
      f.hooks,
    );
    expect(f.run.complete).toBe(true);
    expect(f.run.observedAt).not.toBe('');
    expect(f.said).toEqual([
      'creating',
      'watching',
      'acting',
      'follows stopped',
      'cleaning up',
      'load pod deleted',
      'service deleted',
      'watches settled',
      'done',
    ]);
    expect(cleanup.map((c) => [c.action, c.ok, c.error])).toEqual([
      ['delete load pod of web', true, 'already gone'],
      ['delete temporary service', true, null],
    ]);
    expect(f.failures).toEqual([]);
  });

  it('a failure: recorded with its code, never thrown; its evidence taken before anything is cleaned', async () => {
    const f = frame();
    const stalled = new TermlabError('ROLLOUT_STALLED', 'deployment/web did not finish rolling out');
    await runPhases<VerifyPhase, typeof f.ctx>(
      f.ctx,
      f.run,
      f.cleaner,
      async ({ onPhase }) => {
        onPhase('rolling out');
        throw stalled;
      },
      f.hooks,
    );
    expect(f.run).toMatchObject({ complete: false, incompleteReason: 'deployment/web did not finish rolling out' });
    expect(f.failures).toEqual([stalled]);
    expect(f.said).toEqual([
      'creating',
      'rolling out',
      'evidence of deployment/web did not finish rolling out',
      'follows stopped',
      'cleaning up',
      'service deleted',
      'watches settled',
      'failed: deployment/web did not finish rolling out',
    ]);
  });

  it('Ctrl-C: named with the phase it came in, and no failure of its own for the exit code', async () => {
    const controller = new AbortController();
    const f = frame(controller.signal);
    await runPhases<VerifyPhase, typeof f.ctx>(f.ctx, f.run, f.cleaner, async ({ onPhase }) => {
      onPhase('load starting');
      controller.abort();
      throw new TermlabError('API_UNREACHABLE', 'aborted');
    });
    expect(f.run).toMatchObject({ complete: false, incompleteReason: 'interrupted (Ctrl-C) while load starting' });
    expect(f.failures).toEqual([]);
    expect(f.said).toContain('service deleted');
  });

  it('a cleanup that failed: the run is not complete, and the reason names each failed step', async () => {
    const f = frame();
    f.cleaner.defer('delete load pod termlab-verify-load-abcd', async () => {
      throw new Error('forbidden');
    });
    await runPhases<VerifyPhase, typeof f.ctx>(f.ctx, f.run, f.cleaner, async () => {});
    expect(f.run.complete).toBe(false);
    expect(f.run.incompleteReason).toMatch(/^cleanup failed: delete load pod termlab-verify-load-abcd: .*forbidden/);
    expect(f.said.at(-1)).toMatch(/^failed: cleanup failed: /);
  });
});
