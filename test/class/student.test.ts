// `termlab class student` without a real cluster: the owner label rule, the quota share, the
// kubeconfig (which must really reach a cluster: checked against the simulated one), and the CLI's
// refusals with their exit codes. The cluster side is proved on the real node (npm run test:cluster:class).
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as k8s from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { startSimCluster, type SimCluster } from '../../cluster/sim/index.ts';
import { classLimits, shareOf, studentQuota } from '../../harness/class/student-quota.ts';
import { clusterOf, renderStudentKubeconfig } from '../../harness/class/student-kubeconfig.ts';
import { checkStudentName } from '../../harness/class/student.ts';
import { connect } from '../../harness/kube/index.ts';
import { ownerLabelFor, whoAmI } from '../../harness/safety/identity.ts';
import { isLabelValue } from '../../harness/safety/labels.ts';
import { runCli } from '../support/cli.ts';
import { repoRoot } from '../support/processes.ts';
import { simToken } from '../support/sim.ts';

describe('the owner label from an identity', () => {
  it('keeps a name that is already a label value, and hashes one that is not', () => {
    expect(ownerLabelFor('termlab-admin')).toBe('termlab-admin');
    const sa = ownerLabelFor('system:serviceaccount:termlab:alice');
    expect(sa).toMatch(/^system-serviceaccount-termlab-alice-[0-9a-f]{8}$/);
    expect(isLabelValue(sa)).toBe(true);
  });

  it('never gives two names one label, and stays within 63 characters', () => {
    expect(ownerLabelFor('a:b')).not.toBe(ownerLabelFor('a-b'));
    const long = ownerLabelFor(`oidc:${'x'.repeat(200)}@example.com`);
    expect(long.length).toBeLessThanOrEqual(63);
    expect(isLabelValue(long)).toBe(true);
    expect(ownerLabelFor(`oidc:${'x'.repeat(200)}@example.com`)).not.toBe(
      ownerLabelFor(`oidc:${'x'.repeat(200)}@example.org`),
    );
    expect(isLabelValue(ownerLabelFor('::::'))).toBe(true);
  });
});

describe('the class quota spread over its seats', () => {
  it("gives each of manifests/class.yaml's seats 1/seats of every limit, never more than the whole", () => {
    const config = parseAllDocuments(readFileSync(join(repoRoot, 'manifests/class.yaml'), 'utf8'))
      .map((d) => d.toJSON())
      .find((d) => d?.kind === 'ConfigMap' && d.metadata.name === 'termlab-class');
    const limits = classLimits(config.data, 'class.yaml');
    expect(limits.seats).toBe(5);
    expect(studentQuota(limits)).toEqual({
      pods: '8',
      'requests.cpu': '800m',
      'requests.memory': '819Mi',
      'limits.memory': '2457Mi',
    });
  });

  it('rounds down and reads every unit it is given', () => {
    expect(shareOf('pods', '7', 2)).toBe('3');
    expect(shareOf('requests.cpu', '1500m', 2)).toBe('750m');
    expect(shareOf('limits.memory', '1G', 1)).toBe('953Mi');
    expect(() => shareOf('pods', '4Gi', 2)).toThrow(/a count and takes no unit/);
    expect(() => shareOf('requests.cpu', 'lots', 2)).toThrow(/not a quantity/);
    expect(() => classLimits({ pods: '4' }, 'cm')).toThrow(/data.seats must be a whole number/);
  });
});

describe('manifests/class.yaml', () => {
  const docs = (file: string) =>
    parseAllDocuments(readFileSync(join(repoRoot, file), 'utf8'))
      .map((d) => d.toJSON())
      .filter(Boolean);
  it('runs the same reaper image as manifests/reaper-cronjob.yaml, over every namespace of the class', () => {
    const cron = (file: string) =>
      docs(file).find((d) => d.kind === 'CronJob').spec.jobTemplate.spec.template.spec.containers[0];
    expect(cron('manifests/class.yaml').image).toBe(cron('manifests/reaper-cronjob.yaml').image);
    expect(cron('manifests/class.yaml').args.join(' ')).toMatch(
      /^reap --all-owners --class termlab --env termlab-class /,
    );
  });
  it('grants students nothing cluster-wide: their ClusterRole is bound only by RoleBindings', () => {
    const all = docs('manifests/class.yaml');
    const clusterBindings = all.filter((d) => d.kind === 'ClusterRoleBinding');
    expect(clusterBindings.map((b) => b.roleRef.name)).toEqual(['termlab-reaper-namespaces', 'termlab-witness']);
    const reaperNs = all.find((d) => d.kind === 'ClusterRole' && d.metadata.name === 'termlab-reaper-namespaces');
    expect(reaperNs.rules).toEqual([{ apiGroups: [''], resources: ['namespaces'], verbs: ['list'] }]);
    // The witness reads pods and events class-wide, as its own account only; it writes nowhere but its records.
    const witness = clusterBindings.find((b) => b.roleRef.name === 'termlab-witness');
    expect(witness.subjects).toEqual([
      { kind: 'ServiceAccount', name: 'termlab-witness', namespace: 'termlab-witness' },
    ]);
    const witnessRole = all.find((d) => d.kind === 'ClusterRole' && d.metadata.name === 'termlab-witness');
    expect(witnessRole.rules).toEqual([
      { apiGroups: [''], resources: ['pods'], verbs: ['list', 'watch'] },
      { apiGroups: [''], resources: ['events'], verbs: ['list'] },
    ]);
  });

  it("lets students read the witness's records and nothing more; the witness never deletes one", () => {
    const all = docs('manifests/class.yaml');
    const roles = all.filter((d) => d.kind === 'Role' && d.metadata.namespace === 'termlab-witness');
    const bindings = all.filter((d) => d.kind === 'RoleBinding' && d.metadata.namespace === 'termlab-witness');
    const verbsFor = (subject: string) =>
      bindings
        .filter((b) => b.subjects.some((s: { name: string }) => s.name === subject))
        .flatMap((b) => roles.find((r) => r.metadata.name === b.roleRef.name).rules.flatMap((r: any) => r.verbs));
    expect(verbsFor('system:serviceaccounts:termlab').sort()).toEqual(['get', 'list', 'watch']);
    expect(verbsFor('termlab-witness').sort()).toEqual(['create', 'get', 'list', 'update']);
  });
});

describe('student names', () => {
  it('refuses what cannot name a ServiceAccount and a namespace', () => {
    expect(() => checkStudentName('Alice', 'termlab')).toThrow(/lowercase letters/);
    expect(() => checkStudentName('al_ice', 'termlab')).toThrow(/lowercase letters/);
    expect(() => checkStudentName('a'.repeat(60), 'termlab')).toThrow(/more than 63/);
    expect(() => checkStudentName('alice', 'termlab')).not.toThrow();
    // termlab-witness is the class witness's namespace.
    expect(() => checkStudentName('witness', 'termlab')).toThrow(/the class witness's namespace/);
  });
});

describe('the student kubeconfig', () => {
  let sim: SimCluster;
  beforeAll(async () => {
    sim = await startSimCluster();
  });
  afterAll(async () => {
    await sim.stop();
  });

  it("reaches the cluster with the token it carries, in the student's namespace, and says when it expires", async () => {
    const kc = new k8s.KubeConfig();
    kc.loadFromString(sim.kubeconfig);
    const dir = mkdtempSync(join(tmpdir(), 'termlab-student-'));
    // The instructor's kubeconfig names its CA by file: the student's must carry it inline.
    const caFile = join(dir, 'ca.crt');
    writeFileSync(caFile, Buffer.from(kc.getCurrentCluster()!.caData!, 'base64'));
    const text = renderStudentKubeconfig({
      cluster: clusterOf({ server: kc.getCurrentCluster()!.server, caFile }),
      student: 'alice',
      namespace: 'termlab-alice',
      token: simToken(sim),
      expiresAt: '2030-01-01T00:00:00.000Z',
    });
    expect(text).toContain('expires 2030-01-01T00:00:00.000Z');
    expect(text).not.toContain(caFile);
    const cluster = await connect({ kubeconfigText: text });
    expect(cluster.contextNamespace).toBe('termlab-alice');
    expect(cluster.context).toBe('termlab-alice');
    const identity = await whoAmI(cluster);
    expect(identity).toEqual({
      source: 'SelfSubjectReview',
      username: 'termlab-sim:owner',
      groups: ['system:masters', 'system:authenticated'],
    });
  });

  it('a CA file that cannot be read is named, not skipped', () => {
    expect(() => clusterOf({ server: 'https://x', caFile: '/nonexistent/ca.crt' })).toThrow(
      /\/nonexistent\/ca.crt cannot be read/,
    );
  });
});

describe.concurrent('termlab class student (the CLI)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'termlab-student-cli-'));

  it("says the token's bound in --help", async () => {
    const r = await runCli(['class', 'student', '--help']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/expires after --hours N: default 24, at most 168/);
  });

  it('a bad name is exit 2 before any cluster is asked', async () => {
    const r = await runCli([
      'class',
      'student',
      'Bob',
      '--namespace',
      'termlab',
      '--output-file',
      join(dir, 'bob.kubeconfig'),
      '--kubeconfig',
      '/nonexistent',
    ]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/student name "Bob": lowercase/);
  });

  it('no cluster is exit 3, and no half-written kubeconfig is left', async () => {
    const out = join(dir, 'carol.kubeconfig');
    const r = await runCli([
      'class',
      'student',
      'carol',
      '--namespace',
      'termlab',
      '--output-file',
      out,
      '--kubeconfig',
      join(dir, 'missing-kubeconfig'),
    ]);
    expect(r.code).toBe(3);
    expect(r.stderr).toMatch(/cannot load kubeconfig/);
    expect(existsSync(out)).toBe(false);
  });

  it('an existing output file is kept unless --force, exit 2', async () => {
    const out = join(dir, 'dan.kubeconfig');
    writeFileSync(out, 'keep me');
    const r = await runCli(['class', 'student', 'dan', '--namespace', 'termlab', '--output-file', out]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/the file exists; --force replaces it/);
    expect(readFileSync(out, 'utf8')).toBe('keep me');
  });

  it('--hours out of bounds gets its own line, exit 2', async () => {
    const hours = await runCli([
      'class',
      'student',
      'erin',
      '--namespace',
      'termlab',
      '--output-file',
      join(dir, 'e'),
      '--hours',
      '169',
    ]);
    expect([hours.code, hours.stderr]).toEqual([2, expect.stringMatching(/--hours: a whole number from 1 to 168/)]);
  });

  it('a missing --namespace gets its own line, exit 2', async () => {
    const ns = await runCli(['class', 'student', 'erin', '--output-file', join(dir, 'e')]);
    expect([ns.code, ns.stderr]).toEqual([2, expect.stringMatching(/--namespace NS is needed/)]);
  });

  it('a mistyped flag gets the nearest one, exit 2', async () => {
    const typo = await runCli(['class', 'student', 'erin', '--namspace', 'termlab']);
    expect([typo.code, typo.stderr]).toEqual([
      2,
      expect.stringMatching(/unknown flag --namspace; did you mean --namespace\?/),
    ]);
  });

  it('an unknown subcommand of class, exit 2', async () => {
    const sub = await runCli(['class', 'students']);
    expect([sub.code, sub.stderr]).toEqual([2, expect.stringMatching(/unknown subcommand "students"/)]);
  });

  it('a cluster without the class is exit 3, naming manifests/class.yaml, and the file is not left', async () => {
    const sim = await startSimCluster();
    try {
      const kubeconfig = join(dir, 'sim.kubeconfig');
      writeFileSync(kubeconfig, sim.kubeconfig);
      const out = join(dir, 'frank.kubeconfig');
      const r = await runCli([
        'class',
        'student',
        'frank',
        '--namespace',
        'termlab',
        '--output-file',
        out,
        '--kubeconfig',
        kubeconfig,
      ]);
      expect(r.code).toBe(3);
      expect(r.stderr).toMatch(/no ConfigMap termlab-class: apply manifests\/class.yaml first/);
      expect(existsSync(out)).toBe(false);
    } finally {
      await sim.stop();
    }
  });
});
