// The retry rules on their own: which failures are tried again, the backoff's shape, the budget.
import * as k8s from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { exitCodeFor, TermlabError } from '../../lib/errors.ts';
import { ApiHealth, Backoff, classify, withRetry } from '../../harness/kube/index.ts';

const apiError = (code: number) => new k8s.ApiException(code, 'failed', { message: `status ${code}` }, {});
const socketError = (code: string) => Object.assign(new Error(`connect ${code}`), { code });
const noWait = { next: () => 0, reset: () => {} } as unknown as Backoff;
const target = (patienceMs: number) => ({
  health: new ApiHealth(patienceMs, 1_000),
  context: 'ctx',
  server: 'https://api.invalid',
});

describe('classify', () => {
  it("tries again what a restarting or overloaded API gives, and never a caller's 4xx", () => {
    for (const error of [
      apiError(429),
      apiError(500),
      apiError(503),
      socketError('ECONNREFUSED'),
      socketError('ECONNRESET'),
      Object.assign(new Error('aborted'), { name: 'AbortError' }),
    ]) {
      expect(classify(error).transient, String(error)).toBe(true);
    }
    for (const error of [
      apiError(400),
      apiError(403),
      apiError(404),
      apiError(409),
      apiError(422),
      socketError('CERT_HAS_EXPIRED'),
    ]) {
      expect(classify(error).transient, String(error)).toBe(false);
    }
    expect(classify(apiError(404)).status).toBe(404);
  });
});

describe('Backoff', () => {
  it("doubles from 0.8 s to a 30 s cap, each wait up to twice its base (client-go's reflector)", () => {
    const low = new Backoff(() => 0);
    expect(Array.from({ length: 8 }, () => low.next())).toEqual([800, 1600, 3200, 6400, 12800, 25600, 30000, 30000]);
    const high = new Backoff(() => 1);
    expect(high.next()).toBe(1600);
    high.reset();
    expect(high.next()).toBe(1600);
  });
});

describe('withRetry', () => {
  it('goes on through transient failures and returns the answer', async () => {
    const failures: string[] = [];
    let calls = 0;
    const result = await withRetry(
      target(60_000),
      'read',
      async () => {
        if (++calls < 3) throw socketError('ECONNREFUSED');
        return 'answer';
      },
      { backoff: noWait, onTransientFailure: (f) => failures.push(f.text) },
    );
    expect(result).toBe('answer');
    expect(failures).toEqual(['ECONNREFUSED', 'ECONNREFUSED']);
  });

  it("does not try a caller's 4xx again: API_REJECTED with its status", async () => {
    let calls = 0;
    const error = await withRetry(
      target(60_000),
      'patch',
      async () => {
        calls++;
        throw apiError(403);
      },
      { backoff: noWait },
    ).catch((e: unknown) => e);
    expect(calls).toBe(1);
    expect(error).toBeInstanceOf(TermlabError);
    expect((error as TermlabError).code).toBe('API_REJECTED');
    expect((error as TermlabError).context.status).toBe(403);
  });

  it('gives up once the outage budget is spent: API_UNREACHABLE naming the context, exit 3', async () => {
    const error = await withRetry(
      target(0),
      'list pods',
      async () => {
        throw socketError('ECONNREFUSED');
      },
      { backoff: noWait },
    ).catch((e: unknown) => e);
    expect((error as TermlabError).code).toBe('API_UNREACHABLE');
    expect((error as TermlabError).message).toMatch(
      /list pods: the API of context "ctx" \(https:\/\/api.invalid\) did not answer .* --api-patience 0s \(last: ECONNREFUSED\)/,
    );
    expect(exitCodeFor((error as TermlabError).code)).toBe(3);
  });

  it('a call that joins an outage gets only what is left of the budget', async () => {
    let now = 0;
    const shared = { health: new ApiHealth(10_000, 1_000, () => now), context: 'ctx', server: 'https://api.invalid' };
    shared.health.failed(classify(socketError('ECONNREFUSED')));
    now = 20_000;
    let calls = 0;
    await expect(
      withRetry(
        shared,
        'read',
        async () => {
          calls++;
          throw socketError('ECONNRESET');
        },
        { backoff: noWait },
      ),
    ).rejects.toMatchObject({ code: 'API_UNREACHABLE' });
    expect(calls).toBe(1);
    // Any answer ends the outage: the next call has the whole budget again.
    shared.health.answered();
    calls = 0;
    await expect(
      withRetry(
        shared,
        'read',
        async () => {
          if (++calls < 3) throw socketError('ECONNRESET');
          return 'ok';
        },
        { backoff: noWait },
      ),
    ).resolves.toBe('ok');
  });
});
