// Ctrl-C on a real `termlab run` process: it stops cleanly and leaves no pod behind.
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, readlinkSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimCluster, type SimCluster } from '../../cluster/sim/index.ts';
import { connect, type Cluster } from '../../harness/kube/index.ts';
import { runCli } from '../support/cli.ts';
import { interruptWhen } from '../support/interrupt.ts';
import { repoRoot } from '../support/processes.ts';

/** The outcome column of the run's summary table, by scenario (columns are two or more spaces apart). */
function outcomeColumn(stdout: string, names: string[]): Record<string, string | undefined> {
  const rows = stdout.split('\n').map((line) => line.split(/\s{2,}/));
  return Object.fromEntries(names.map((name) => [name, rows.find((cells) => cells[0] === name)?.[3]]));
}

let sim: SimCluster;
let cluster: Cluster;
let dir: string;
beforeAll(async () => {
  sim = await startSimCluster();
  cluster = await connect({ kubeconfigText: sim.kubeconfig });
  dir = mkdtempSync(join(tmpdir(), 'termlab-int-'));
  writeFileSync(join(dir, 'kubeconfig'), sim.kubeconfig);
});
afterAll(async () => {
  await sim.stop();
});

// Side by side on one cluster: each run has an owner of its own, and nothing here faults the cluster.
describe.concurrent('Ctrl-C during termlab run', () => {
  it('removes finalizers, deletes its pods, writes incomplete observations and exits 130', async ({ expect }) => {
    const out = join(dir, 'run');
    const { code, stdout, stderr } = await interruptWhen(
      [
        'bin/termlab.js',
        'run',
        '--verbose', // a line for every phase, which this test waits for
        '--reveal',
        '--kubeconfig',
        join(dir, 'kubeconfig'),
        '--only',
        'hook-fits-grace,no-prestop',
        '--owner',
        'ctrl-c',
        '--output-dir',
        out,
      ],
      repoRoot,
      (seen) => (seen.match(/request in flight/g) ?? []).length >= 2,
    );
    expect(code, `stdout:\n${stdout}\nstderr:\n${stderr}`).toBe(130);
    const files = readdirSync(out).filter((f) => f.endsWith('.observation.json'));
    expect(files).toHaveLength(2);
    for (const f of files) {
      const o = JSON.parse(readFileSync(join(out, f), 'utf8'));
      expect(o.run.complete).toBe(false);
      expect(o.run.incompleteReason).toMatch(/^interrupted \(Ctrl-C\)/);
    }
    // Each verdict's one line says the run was stopped, not what the stop left unseen.
    expect(stdout).not.toMatch(/no terminated container state was observed/);
    // The requests the Ctrl-C ended are the interrupt's, not the kubelet's cut: in the table and in the report.
    expect(outcomeColumn(stdout, ['hook-fits-grace', 'no-prestop'])).toEqual({
      'hook-fits-grace': 'interrupted',
      'no-prestop': 'interrupted',
    });
    expect(readFileSync(join(out, 'report.md'), 'utf8')).toMatch(/\| hook-fits-grace \|[^\n]*\| interrupted \|/);
    const regraded = await runCli(['grade', out], { KUBECONFIG: '/nonexistent' });
    expect(regraded.stdout.match(/the run stopped before it finished: interrupted \(Ctrl-C\)/g) ?? []).toHaveLength(2);
    const left = () =>
      cluster.core
        .listNamespacedPod({ namespace: 'default', labelSelector: 'termlab.io/owner=ctrl-c' })
        .then((l) => l.items.length);
    await expect.poll(left, { timeout: 20_000 }).toBe(0);
  });

  it('SIGTERM is named as such and exits 143, its requests interrupted, not cut', async ({ expect }) => {
    const out = join(dir, 'run-term');
    const { code, stdout, stderr } = await interruptWhen(
      [
        'bin/termlab.js',
        'run',
        '--verbose', // a line for every phase, which this test waits for
        '--reveal',
        '--kubeconfig',
        join(dir, 'kubeconfig'),
        '--only',
        'hook-fits-grace,no-prestop',
        '--owner',
        'sigterm',
        '--output-dir',
        out,
      ],
      repoRoot,
      (seen) => (seen.match(/request in flight/g) ?? []).length >= 2,
      'once',
      process.execPath,
      'SIGTERM',
    );
    const shown = `stdout:\n${stdout}\nstderr:\n${stderr}`;
    expect(code, shown).toBe(143);
    expect(stderr, shown).toMatch(/SIGTERM received: stopping cleanly/);
    expect(stderr, shown).not.toMatch(/Ctrl-C/);
    expect(stdout, shown).toMatch(/exit 143: interrupted \(SIGTERM\)\n$/);
    expect(outcomeColumn(stdout, ['hook-fits-grace', 'no-prestop'])).toEqual({
      'hook-fits-grace': 'interrupted',
      'no-prestop': 'interrupted',
    });
    for (const f of readdirSync(out).filter((name) => name.endsWith('.observation.json')))
      expect(JSON.parse(readFileSync(join(out, f), 'utf8')).run.incompleteReason).toMatch(/^interrupted \(SIGTERM\)/);
    const left = () =>
      cluster.core
        .listNamespacedPod({ namespace: 'default', labelSelector: 'termlab.io/owner=sigterm' })
        .then((l) => l.items.length);
    await expect.poll(left, { timeout: 20_000 }).toBe(0);
  });

  // Ctrl-C at each phase of a default run (port-forward, the lab pair): the harness's own abort is
  // never graded as the kubelet's doing, reports/latest stays where it was, and pack refuses the run.
  it.each(['creating', 'waiting for Ready', 'request in flight', 'deleting', 'terminating', 'collecting'])(
    'at "%s": no fail, no differs, latest not moved, pack refuses it',
    async (phase) => {
      const cwd = mkdtempSync(join(tmpdir(), 'termlab-int-cwd-'));
      const cli = join(repoRoot, 'bin', 'termlab.js');
      // Run from a folder of its own, whose reports/latest points at an earlier whole run.
      mkdirSync(join(cwd, 'reports', 'earlier'), { recursive: true });
      symlinkSync(join(cwd, 'reports', 'earlier'), join(cwd, 'reports', 'latest'));
      // The lab pair, shortened so that a run reaches its last phase quickly on a loaded machine.
      writeFileSync(
        join(cwd, 'pair.yaml'),
        `scenarios:
  - { name: short-grace, mode: graceful, preStop: { kind: exec-sleep, seconds: 1 }, terminationGracePeriodSeconds: 2, workMs: 5000, deleteDelayMs: 500, labPair: { id: grace, role: short } }
  - { name: restored-grace, mode: graceful, preStop: { kind: exec-sleep, seconds: 1 }, terminationGracePeriodSeconds: 8, workMs: 5000, deleteDelayMs: 500, labPair: { id: grace, role: restored } }
`,
      );
      const { code, stdout, stderr } = await interruptWhen(
        [
          cli,
          'run',
          '--verbose', // a line for every phase, which this test waits for
          '--reveal',
          '--kubeconfig',
          join(dir, 'kubeconfig'),
          '--scenarios',
          join(cwd, 'pair.yaml'),
          '--owner',
          `ctrl-c-${phase.split(' ')[0]}`,
        ],
        cwd,
        (seen) => seen.includes(`  ${phase}`),
      );
      const shown = `stdout:\n${stdout}\nstderr:\n${stderr}`;
      expect(code, shown).toBe(130);
      expect(stdout, shown).not.toMatch(/differs from the model|evidence invalid|: fail —/);
      expect(stdout, shown).toMatch(/interrupted: this run is recorded as interrupted/);
      const runDir = /reports: (.*)\/report\.html/.exec(stdout)?.[1];
      expect(runDir, shown).toBeDefined();
      // reports/latest never points at an interrupted run.
      expect(readlinkSync(join(cwd, 'reports', 'latest'))).toBe(join(cwd, 'reports', 'earlier'));
      const pack = await runCli(['pack', runDir!, '--output-file', join(cwd, 'out.tar.gz')]);
      expect(pack.code, pack.stderr).toBe(2);
      expect(pack.stderr).toMatch(/was interrupted \(Ctrl-C\).*: an interrupted run cannot be handed in/);
    },
  );
});

// A terminal's Ctrl-C reaches every process of the group: through `npx tsx` the CLI got it more than once
// (npx forwards it to tsx, tsx relays it) and quit at once as if Ctrl-C had been pressed twice, leaving the
// ledger, the standby and the deleted pod behind. One Ctrl-C, however many times it arrives, stops cleanly.
describe('one Ctrl-C delivered twice during a retries run', () => {
  const retryScenario = (cwd: string) => {
    writeFileSync(
      join(cwd, 'retry.yaml'),
      `scenarios:
  - { name: retry-doubles-effect, mode: graceful, preStop: { kind: none }, terminationGracePeriodSeconds: 2, workMs: 8000, deleteDelayMs: 1000, effect: start, retry: { attempts: 2, backoffMs: 500, on: [cut, 5xx], idempotencyKey: false } }
`,
    );
    return join(cwd, 'retry.yaml');
  };
  it.each([
    ['relayed to the CLI once it is stopping', 'relayed', process.execPath, [join(repoRoot, 'bin', 'termlab.js')]],
  ] as const)(
    '%s: exits 130 as interrupted, its observation written, no pod left',
    async (_name, how, command, launcher) => {
      const cwd = mkdtempSync(join(tmpdir(), 'termlab-int-twice-'));
      const owner = `ctrl-c-${how}`;
      const out = join(cwd, 'run');
      const { code, stdout, stderr } = await interruptWhen(
        [
          ...launcher,
          'run',
          '--verbose', // a line for every phase, which this test waits for
          '--reveal',
          '--kubeconfig',
          join(dir, 'kubeconfig'),
          '--scenarios',
          retryScenario(cwd),
          '--owner',
          owner,
          '--output-dir',
          out,
        ],
        repoRoot,
        (seen) => seen.includes('  request in flight'),
        how,
        command,
      );
      const shown = `stdout:\n${stdout}\nstderr:\n${stderr}`;
      expect(code, shown).toBe(130);
      expect(stdout, shown).toMatch(/interrupted: this run is recorded as interrupted[\s\S]*exit 130: interrupted/);
      const files = readdirSync(out).filter((f) => f.endsWith('.observation.json'));
      expect(files, shown).toHaveLength(1);
      expect(JSON.parse(readFileSync(join(out, files[0]!), 'utf8')).run.incompleteReason).toMatch(
        /^interrupted \(Ctrl-C\)/,
      );
      const left = () =>
        cluster.core
          .listNamespacedPod({ namespace: 'default', labelSelector: `termlab.io/owner=${owner}` })
          .then((l) => l.items.length);
      await expect.poll(left, { timeout: 20_000 }).toBe(0);
      // Its two Services (the ledger's, the retry Service) are gone with the pods.
      const services = await cluster.core.listNamespacedService({
        namespace: 'default',
        labelSelector: `termlab.io/owner=${owner}`,
      });
      expect(services.items.map((s) => s.metadata?.name)).toEqual([]);
    },
  );
});
