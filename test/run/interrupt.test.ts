// Ctrl-C on a real `termlab run` process: it stops cleanly and leaves no pod behind.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimCluster, type SimCluster } from '../../cluster/sim/index.ts';
import { connect, type Cluster } from '../../harness/kube/index.ts';
import { repoRoot } from '../support/processes.ts';

let sim: SimCluster;
let cluster: Cluster;
let dir: string;
beforeAll(async () => {
  sim = await startSimCluster();
  cluster = await connect({ kubeconfigText: sim.kubeconfig });
  dir = mkdtempSync(join(tmpdir(), 'termlab-int-'));
  writeFileSync(join(dir, 'kubeconfig'), sim.kubeconfig);
});
afterAll(async () => { await sim.stop(); });

describe('Ctrl-C during termlab run', () => {
  it('removes finalizers, deletes its pods, writes incomplete observations and exits 130', async () => {
    const out = join(dir, 'run');
    const child = spawn(process.execPath, ['--import', 'tsx', 'harness/cli.ts', 'run', '--kubeconfig', join(dir, 'kubeconfig'), '--only', 'hook-fits-grace,no-prestop', '--owner', 'ctrl-c', '--out', out], { cwd: repoRoot, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stderr.on('data', (c: Buffer) => { stderr += c; });
    let interrupted = false;
    child.stdout.on('data', (c: Buffer) => {
      stdout += c;
      if (!interrupted && (stdout.match(/request in flight/g) ?? []).length >= 2) { interrupted = true; child.kill('SIGINT'); }
    });
    const code = await new Promise((resolve) => child.on('close', resolve));
    expect(code, `stdout:\n${stdout}\nstderr:\n${stderr}`).toBe(130);
    const files = readdirSync(out).filter((f) => f.endsWith('.observation.json'));
    expect(files).toHaveLength(2);
    for (const f of files) {
      const o = JSON.parse(readFileSync(join(out, f), 'utf8'));
      expect(o.run.complete).toBe(false);
      expect(o.run.incompleteReason).toMatch(/^interrupted \(Ctrl-C\)/);
    }
    const left = () => cluster.core.listNamespacedPod({ namespace: 'default', labelSelector: 'termlab.io/owner=ctrl-c' }).then((l) => l.items.length);
    await expect.poll(left, { timeout: 20_000 }).toBe(0);
  });
});
