// A retry scenario's fields (issue 27): the retry: block and the effect point, each mistake an error that
// names the scenario and the field; the shipped manifests/retries.yaml reads whole.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadScenarios } from '../../harness/scenario/load.ts';
import {
  renderLedger,
  renderLedgerService,
  renderRetryService,
  renderStandby,
  withRetryService,
} from '../../harness/scenario/render-retry.ts';
import { renderPod } from '../../harness/scenario/render.ts';
import { loadScenarioSet, loadTemplate } from '../../harness/scenario/load.ts';

const BASE = [
  'scenarios:',
  '  - name: retry-a',
  '    mode: graceful',
  '    preStop: { kind: none }',
  '    terminationGracePeriodSeconds: 2',
  '    workMs: 8000',
  '    deleteDelayMs: 1000',
];

function file(extra: string[]): string {
  const path = join(mkdtempSync(join(tmpdir(), 'termlab-retry-')), 'retries.yaml');
  writeFileSync(path, [...BASE, ...extra].join('\n') + '\n');
  return path;
}

describe('retry scenarios', () => {
  it('reads manifests/retries.yaml: four scenarios, the retries pair without and with a key', async () => {
    const scenarios = await loadScenarios('manifests/retries.yaml');
    expect(scenarios.map((s) => s.name)).toEqual([
      'retry-doubles-effect',
      'retry-with-key',
      'retry-effect-at-end',
      'retry-after-graceful',
    ]);
    expect(
      scenarios.filter((s) => s.labPair?.id === 'retries').map((s) => [s.labPair!.role, s.retry!.idempotencyKey]),
    ).toEqual([
      ['no-key', false],
      ['with-key', true],
    ]);
  });

  it('names a misspelt retry field, a bad value and a bad effect point by the scenario', async () => {
    await expect(
      loadScenarios(
        file(['    effect: start', '    retry: { attempts: 2, backoff: 500, on: [cut], idempotencyKey: false }']),
      ),
    ).rejects.toThrow(
      /scenario "retry-a": retry\.backoff \(line 9\): `backoff` is not a retry field; did you mean `backoffMs`\?/,
    );
    // With no near name, the known ones are listed: "(the retry fields: …)", not "(a retry fields: …)".
    await expect(
      loadScenarios(
        file([
          '    effect: start',
          '    retry: { attempts: 2, backoffMs: 500, on: [cut], idempotencyKey: false, zzzq: 1 }',
        ]),
      ),
    ).rejects.toThrow(
      /retry\.zzzq \(line 9\): `zzzq` is not a retry field \(the retry fields: attempts, backoffMs, on, idempotencyKey\)$/,
    );
    await expect(
      loadScenarios(
        file(['    effect: start', '    retry: { attempts: 9, backoffMs: 500, on: [cut], idempotencyKey: false }']),
      ),
    ).rejects.toThrow(/scenario "retry-a": retry\.attempts \(line 9\): Too big/);
    await expect(
      loadScenarios(
        file(['    effect: start', '    retry: { attempts: 2, backoffMs: 500, on: [timeout], idempotencyKey: false }']),
      ),
    ).rejects.toThrow(
      /scenario "retry-a": retry\.on\.0 \(line 9\): Invalid option: expected one of "cut"\|"rejected"\|"5xx"/,
    );
    await expect(
      loadScenarios(
        file(['    effect: middle', '    retry: { attempts: 2, backoffMs: 500, on: [cut], idempotencyKey: false }']),
      ),
    ).rejects.toThrow(/scenario "retry-a": effect \(line 8\): Invalid option/);
    await expect(
      loadScenarios(
        file([
          '    effect: start',
          '    retry: { attempts: 2, backoffMs: 500, on: [cut, cut], idempotencyKey: false }',
        ]),
      ),
    ).rejects.toThrow(/retry\.on \(line 9\): each of cut, rejected, 5xx at most once/);
  });

  it('refuses an effect with no retry block, a retry with a sidecar, and a pair half whose key contradicts its role', async () => {
    await expect(loadScenarios(file(['    effect: start']))).rejects.toThrow(
      /scenario "retry-a": effect \(line 8\): an effect is counted by the ledger a retry scenario runs/,
    );
    await expect(
      loadScenarios(
        file([
          '    retry: { attempts: 2, backoffMs: 0, on: [cut], idempotencyKey: false }',
          '    sidecar: { native: true, onTerm: exit }',
        ]),
      ),
    ).rejects.toThrow(/retry \(line 8\): a retry scenario sends its attempts to the lab server itself/);
    await expect(
      loadScenarios(
        file([
          '    retry: { attempts: 2, backoffMs: 0, on: [cut], idempotencyKey: true }',
          '    labPair: { id: retries, role: no-key }',
        ]),
      ),
    ).rejects.toThrow(/labPair\.role \(line 9\): the retries pair's no-key half has retry\.idempotencyKey false/);
  });

  it("renders the deleted pod and the standby with the effect and the ledger's address, both behind the retry Service, the ledger in ledger mode behind a NodePort Service", async () => {
    const [scenario] = await loadScenarios('manifests/retries.yaml');
    const template = await loadTemplate();
    const options = { podName: 'tl-x', owner: 'o', runId: 'run-1', ledgerUrl: 'http://10.0.0.1:80' };
    const env = (pod: { spec?: { containers: { env?: { name: string; value?: string }[] }[] } }) =>
      Object.fromEntries(
        (pod.spec!.containers[0]!.env ?? []).filter((e) => e.value !== undefined).map((e) => [e.name, e.value]),
      );
    expect(env(renderPod(template, scenario!, options))).toMatchObject({
      LAB_MODE: 'graceful',
      LAB_EFFECT: 'start',
      LAB_LEDGER_URL: 'http://10.0.0.1:80',
    });
    const standby = renderStandby(template, scenario!, options);
    expect(standby.metadata).toMatchObject({
      name: 'tl-x-b',
      labels: { 'termlab.io/role': 'standby', 'termlab.io/run': 'run-1' },
    });
    expect(standby.metadata!.finalizers).toBeUndefined();
    const ledger = renderLedger(template, scenario!, options);
    expect(env(ledger)).toMatchObject({ LAB_MODE: 'ledger' });
    expect(env(ledger).LAB_EFFECT).toBeUndefined();
    expect(ledger.spec!.activeDeadlineSeconds).toBeGreaterThan(8 + 8);
    const now = Date.parse('2026-12-04T12:00:00Z');
    const service = renderLedgerService(template, scenario!, ledger, now);
    expect(service.spec).toMatchObject({
      type: 'NodePort',
      selector: { 'termlab.io/role': 'ledger', 'termlab.io/run': 'run-1' },
    });
    expect(Date.parse(service.metadata.annotations['termlab.io/expires-at'])).toBe(
      now + ledger.spec!.activeDeadlineSeconds! * 1000,
    );
    // The retry Service selects the two lab pods, never the ledger, and expires with them.
    const deleted = withRetryService(renderPod(template, scenario!, options), scenario!, options.podName);
    const retry = renderRetryService(template, scenario!, standby, now);
    expect(retry.metadata).toMatchObject({
      name: 'tl-x-svc',
      labels: { 'termlab.io/role': 'retry', 'termlab.io/run': 'run-1' },
    });
    expect(retry.spec.type).toBeUndefined();
    const selects = (pod: { metadata?: { labels?: Record<string, string> } }) =>
      Object.entries(retry.spec.selector as Record<string, string>).every(([k, v]) => pod.metadata?.labels?.[k] === v);
    expect([selects(deleted), selects(standby), selects(ledger)]).toEqual([true, true, false]);
    expect(retry.metadata.annotations['termlab.io/expires-at']).toBe(
      service.metadata.annotations['termlab.io/expires-at'],
    );
  });
});

describe('a rollout scenario', () => {
  it('refuses a retry block or any field it does not know, naming it (it was dropped without a word)', async () => {
    const path = join(mkdtempSync(join(tmpdir(), 'termlab-rollout-')), 'rollout.yaml');
    writeFileSync(
      path,
      [
        'scenarios:',
        '  - kind: rollout',
        '    name: rr',
        '    replicas: 2',
        '    maxSurge: 1',
        '    maxUnavailable: 0',
        '    terminationGracePeriodSeconds: 30',
        '    from: { mode: graceful, preStop: { kind: none } }',
        '    to: { mode: graceful, preStop: { kind: none } }',
        '    load: { rate: 10, workMs: 100, durationMs: 5000 }',
        '    changeAfterMs: 1000',
        '    retry: { attempts: 2, backoffMs: 100, on: [cut], idempotencyKey: false }',
      ].join('\n') + '\n',
    );
    await expect(loadScenarioSet(path)).rejects.toThrow(/Unrecognized key: "retry"/);
  });
});
