// npm run test:cluster:class — a class on the real node: manifests/class.yaml applied, two students
// made by `termlab class student`, each runs the lab pair with their own kubeconfig, then each one's
// delete, patch, exec and port-forward on the other's pod is refused by the cluster (and on their
// own pod allowed), the pods carry who the cluster says made them, and the class-wide reaper (as its
// own ServiceAccount) finds the expired pods of both students. The class's witness (issue 41) records every
// lab pod; killed between alice's and bob's runs it loses no record; both students' hand-ins are vouched
// `yes`, a copy of alice's run handed in by bob `mismatch: owner`, a forged file with a UID the cluster never had
// `no record`, a real file with finishedAt moved 3 s `mismatch: finishedAt`; bob cannot write, patch or delete a
// record; and the same gradebook comes out of the exported records offline. Prints each check and
// `class_checks_failed: N`. Needs `npm run cluster:up` (TERMLAB_NODE_KUBECONFIG for another
// checkout's node). TERMLAB_NODE_LOCK=FILE wraps every command that touches the node in `flock FILE`.
// The CronJob of class.yaml is left out here: the node has no reaper image; the reaper runs from this checkout.
// The witness is class.yaml's own Deployment, in the node's lab image (built from this checkout's server/ by
// `npm run cluster:up`: bring the node up again after changing the witness); it reaches the API server through
// the `kubernetes` Service. Killed mid-class is its pod deleted at once (--grace-period=0 --force): the
// Deployment starts another, which must list the lab pods before bob's run.
import { spawn, spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseAllDocuments, stringify } from 'yaml';
import { ownerLabelFor } from '../../harness/safety/identity.ts';
import { TermlabError } from '../../lib/errors.ts';
import { devArgs, runDevTool } from '../entry.ts';
import { CONTEXT, REPO, paths } from './layout.ts';

const CLASS = 'termlab';
const STUDENTS = ['alice', 'bob'] as const;
const ENV = 'termlab-class';
const kubeconfig = process.env.TERMLAB_NODE_KUBECONFIG ?? paths.kubeconfig;
const lock = process.env.TERMLAB_NODE_LOCK;
const kubectlBin = process.env.TERMLAB_KUBECTL ?? 'kubectl';
/** The students' kubeconfigs and the runs' folders: made when the check starts (not for --help or a bad flag). */
let dir = '';
const failures: string[] = [];
const started = Date.now();

interface Result {
  status: number | null;
  stdout: string;
  stderr: string;
}

function onNode(command: string, args: string[], env: NodeJS.ProcessEnv = {}, input?: string): Result {
  // The time limit starts once the lock is held: another helper may hold it for minutes.
  const limited = ['timeout', '300', command, ...args];
  const [cmd, argv] = lock ? ['flock', ['-o', lock, ...limited]] : [limited[0]!, limited.slice(1)];
  const r = spawnSync(cmd, argv, { cwd: REPO, encoding: 'utf8', env: { ...process.env, ...env }, input });
  return { status: r.status, stdout: r.stdout ?? '', stderr: r.stderr ?? '' };
}

const admin = (args: string[], input?: string) =>
  onNode(kubectlBin, ['--kubeconfig', kubeconfig, '--context', CONTEXT, ...args], {}, input);
const as = (student: string, args: string[], input?: string) =>
  onNode(kubectlBin, ['--kubeconfig', join(dir, `${student}.kubeconfig`), ...args], {}, input);
const termlab = (args: string[], env: NodeJS.ProcessEnv = {}) =>
  onNode(process.execPath, [join(REPO, 'bin/termlab.js'), ...args], env);
const nsOf = (student: string) => `${CLASS}-${student}`;
const oneLine = (text: string) => text.trim().split('\n').filter(Boolean).pop() ?? '';

function check(name: string, ok: boolean, detail: string): void {
  console.log(`${ok ? 'ok  ' : 'FAIL'} ${name}: ${detail}`);
  if (!ok) failures.push(name);
}

/** A refusal by RBAC, and the message names who, what and where. */
function refused(name: string, r: Result, verb: string, resource: string, namespace: string, user: string): void {
  const text = `${r.stderr}${r.stdout}`.trim();
  const says =
    text.includes('forbidden') &&
    text.includes(`User "${user}"`) &&
    text.includes(`cannot ${verb} resource "${resource}"`) &&
    text.includes(`in the namespace "${namespace}"`);
  check(name, r.status !== 0 && says, `exit ${r.status}: ${oneLine(text)}`);
}

function targetPod(student: string, extra: Record<string, unknown> = {}): string {
  return JSON.stringify({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: `${student}-target`,
      namespace: nsOf(student),
      labels: { 'app.kubernetes.io/name': 'termlab-class-check' },
      ...((extra.metadata as object) ?? {}),
    },
    spec: {
      restartPolicy: 'Never',
      automountServiceAccountToken: false,
      enableServiceLinks: false,
      terminationGracePeriodSeconds: 1,
      containers: [
        {
          name: 'lab',
          image: 'termlab/lab-server:0.1.0',
          imagePullPolicy: 'IfNotPresent',
          ports: [{ name: 'http', containerPort: 8080 }],
          readinessProbe: { httpGet: { path: '/readyz', port: 'http' }, periodSeconds: 1 },
          resources: { requests: { cpu: '50m', memory: '64Mi' }, limits: { memory: '128Mi' } },
          securityContext: { allowPrivilegeEscalation: false, runAsNonRoot: true, runAsUser: 1000 },
        },
      ],
      ...((extra.spec as object) ?? {}),
    },
  });
}

/** A merge PATCH on a pod with the student's own token, as any HTTP client could send it. */
function patchAs(student: string, namespace: string, pod: string): Result {
  const config = parseAllDocuments(readFileSync(join(dir, `${student}.kubeconfig`), 'utf8'))[0]!.toJSON() as {
    clusters: { cluster: { server: string; 'certificate-authority-data': string } }[];
    users: { user: { token: string } }[];
  };
  const ca = join(dir, 'ca.crt');
  writeFileSync(ca, Buffer.from(config.clusters[0]!.cluster['certificate-authority-data'], 'base64'));
  const url = `${config.clusters[0]!.cluster.server}/api/v1/namespaces/${namespace}/pods/${pod}`;
  const r = onNode('curl', [
    '-sS',
    '--cacert',
    ca,
    '-X',
    'PATCH',
    '-H',
    `Authorization: Bearer ${config.users[0]!.user.token}`,
    '-H',
    'Content-Type: application/merge-patch+json',
    '--data',
    '{"metadata":{"labels":{"touched":"yes"}}}',
    '-w',
    '\nHTTP %{http_code}',
    url,
  ]);
  const code = /HTTP (\d+)$/.exec(r.stdout)?.[1];
  const message = (() => {
    try {
      return (JSON.parse(r.stdout.replace(/\nHTTP \d+$/, '')) as { message?: string }).message ?? '';
    } catch {
      return r.stdout;
    }
  })();
  return { status: code === '200' ? 0 : Number(code ?? 1), stdout: `HTTP ${code}: ${message}`, stderr: r.stderr };
}

/** Port-forward to a pod as a student: resolves with the first HTTP status through it, or the refusal. */
// Port-forwards running now, by process group: ended if this check is itself stopped (Ctrl-C, a CI timeout).
const forwards = new Set<number>();
function endForwards(): void {
  for (const group of forwards)
    try {
      process.kill(-group, 'SIGTERM');
    } catch {
      /* already gone */
    }
}

async function portForward(student: string, namespace: string, pod: string): Promise<{ ok: boolean; text: string }> {
  const argv = [
    '--kubeconfig',
    join(dir, `${student}.kubeconfig`),
    '-n',
    namespace,
    'port-forward',
    `pod/${pod}`,
    ':8080',
  ];
  // flock -o: kubectl must not inherit the lock's descriptor; and a process group of its own, killed
  // whole below: killing flock alone left kubectl running, holding the node's lock for every helper.
  const [cmd, args] = lock ? ['flock', ['-o', lock, kubectlBin, ...argv]] : [kubectlBin, argv];
  const child = spawn(cmd, args, { cwd: REPO, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  forwards.add(child.pid!);
  let out = '';
  let err = '';
  child.stderr.on('data', (c) => {
    err += c;
  });
  try {
    return await new Promise((resolve) => {
      const timer = setTimeout(
        () => resolve({ ok: false, text: `no answer within 300 s (lock wait included): ${oneLine(err)}` }),
        300_000,
      );
      // 'close', not 'exit': kubectl's refusal can still be in the stderr pipe when the process has exited.
      child.on('close', (code) => {
        clearTimeout(timer);
        resolve({ ok: false, text: `exit ${code}: ${oneLine(err)}` });
      });
      child.stdout.on('data', async (c) => {
        out += c;
        const port = /127\.0\.0\.1:(\d+)/.exec(out)?.[1];
        if (!port) return;
        clearTimeout(timer);
        try {
          const res = await fetch(`http://127.0.0.1:${port}/readyz`, { signal: AbortSignal.timeout(10_000) });
          resolve({ ok: true, text: `HTTP ${res.status} from /readyz through 127.0.0.1:${port}` });
        } catch (error) {
          resolve({ ok: false, text: `forwarded, but the request failed: ${(error as Error).message}` });
        }
      });
    });
  } finally {
    try {
      process.kill(-child.pid!, 'SIGTERM');
    } catch {
      /* already gone */
    }
    forwards.delete(child.pid!);
  }
}

async function main(): Promise<void> {
  // 1. The class, as an instructor applies it (without the CronJob: see the header), its witness included.
  const docs = parseAllDocuments(readFileSync(join(REPO, 'manifests/class.yaml'), 'utf8'))
    .map((d) => d.toJSON())
    .filter((d) => d && d.kind !== 'CronJob');
  const applied = admin(['apply', '-f', '-'], docs.map((d) => stringify(d)).join('---\n'));
  check(
    'apply manifests/class.yaml',
    applied.status === 0,
    applied.status === 0 ? `${docs.length} objects (CronJob left out)` : oneLine(applied.stderr),
  );
  let witnessPod = await witnessPodListed(null);

  // 2. Two students, made by `termlab class student`.
  for (const s of STUDENTS) {
    const r = termlab([
      'class',
      'student',
      s,
      '--namespace',
      CLASS,
      '--output-file',
      join(dir, `${s}.kubeconfig`),
      '--kubeconfig',
      kubeconfig,
      '--context',
      CONTEXT,
      '--hours',
      '1',
      '--force',
    ]);
    console.log(
      r.stdout
        .trim()
        .split('\n')
        .map((l) => `       ${l}`)
        .join('\n'),
    );
    check(
      `termlab class student ${s}`,
      r.status === 0 && /the token expires .* \(1 h\)/.test(r.stdout),
      r.status === 0 ? oneLine(r.stdout) : `exit ${r.status}: ${oneLine(r.stderr)}`,
    );
    const who = as(s, ['auth', 'whoami', '-o', 'jsonpath={.status.userInfo.username}']);
    check(
      `${s}'s kubeconfig is ${s}`,
      who.stdout.trim() === `system:serviceaccount:${CLASS}:${s}`,
      who.stdout.trim() || oneLine(who.stderr),
    );
  }

  // 3. Each student runs the lab pair with their own kubeconfig (its namespace is theirs).
  for (const s of STUDENTS) {
    const out = join(dir, `${s}-run`);
    const state = join(dir, `${s}-state`);
    const r = termlab(
      [
        'run',
        // The pair's line is what this check reads: no predictions, so --reveal.
        '--reveal',
        '--kubeconfig',
        join(dir, `${s}.kubeconfig`),
        '--only',
        'short-grace,restored-grace',
        '--lab',
        'manifests/lab.yaml',
        '--output-dir',
        out,
      ],
      { TERMLAB_STATE_DIR: state },
    );
    const pair = /lab pair grace: (\w+)/.exec(r.stdout)?.[1];
    check(
      `${s} runs the lab pair`,
      r.status === 0 && pair === 'pass',
      `exit ${r.status}, lab pair grace: ${pair ?? 'none'}${r.status ? `; ${oneLine(r.stderr || r.stdout)}` : ''}`,
    );
    const username = `system:serviceaccount:${CLASS}:${s}`;
    const observations = readdirSync(out)
      .filter((f) => f.endsWith('.observation.json'))
      .map((f) => JSON.parse(readFileSync(join(out, f), 'utf8')) as { run?: { ownerId?: string } });
    const owners = [...new Set(observations.map((o) => o.run?.ownerId))];
    check(
      `${s}'s pods are labelled with who the cluster says ${s} is`,
      owners.length === 1 && owners[0] === ownerLabelFor(username),
      `owner ${owners.join(', ')} (expected ${ownerLabelFor(username)})`,
    );
    const records = readdirSync(join(state, 'runs')).map(
      (f) => JSON.parse(readFileSync(join(state, 'runs', f), 'utf8')) as { identity?: string; ownerSource?: string },
    );
    check(
      `${s}'s run record names the identity`,
      records.length === 1 && records[0]!.identity === username && records[0]!.ownerSource === 'SelfSubjectReview',
      JSON.stringify(records.map((x) => ({ identity: x.identity, ownerSource: x.ownerSource }))),
    );
    // Mid-class: the witness pod is killed after alice's run; its Deployment starts another before bob's.
    if (s === 'alice') {
      witnessBefore = witnessRecordVersions();
      const old = witnessPod ?? '';
      const killed = admin(['-n', WITNESS_NS, 'delete', 'pod', old, '--grace-period=0', '--force']);
      check(
        'kill the witness pod mid-class (deleted at once: --grace-period=0 --force)',
        old !== '' && killed.status === 0,
        old ? `${old}: ${oneLine(killed.stdout || killed.stderr)}` : 'no witness pod to kill',
      );
      witnessPod = await witnessPodListed(old || null);
    }
  }
  await witnessChecks();

  // 4. A pod of each student's own, then every cross-student delete, patch, exec and port-forward.
  for (const s of STUDENTS) {
    const r = as(s, ['apply', '-f', '-'], targetPod(s));
    check(`${s} creates a pod in their namespace`, r.status === 0, oneLine(r.stdout || r.stderr));
  }
  for (const s of STUDENTS) {
    const r = as(s, ['-n', nsOf(s), 'wait', '--for=condition=Ready', `pod/${s}-target`, '--timeout=90s']);
    check(`${s}-target is ready`, r.status === 0, oneLine(r.stdout || r.stderr));
  }
  for (const [me, other] of [
    ['alice', 'bob'],
    ['bob', 'alice'],
  ] as const) {
    const user = `system:serviceaccount:${CLASS}:${me}`;
    const ns = nsOf(other);
    const pod = `${other}-target`;
    refused(
      `${me} kubectl delete pod ${pod}`,
      as(me, ['-n', ns, 'delete', 'pod', pod, '--wait=false']),
      'delete',
      'pods',
      ns,
      user,
    );
    // kubectl patch reads the pod first: refused there; the PATCH itself is refused too (curl with the student's token).
    refused(
      `${me} kubectl patch pod ${pod}`,
      as(me, ['-n', ns, 'patch', 'pod', pod, '-p', '{"metadata":{"labels":{"touched":"yes"}}}']),
      'get',
      'pods',
      ns,
      user,
    );
    refused(`${me} PATCH pod ${pod}`, patchAs(me, ns, pod), 'patch', 'pods', ns, user);
    refused(
      `${me} kubectl exec ${pod}`,
      as(me, ['-n', ns, 'exec', pod, '--', 'node', '-e', '0']),
      'get',
      'pods',
      ns,
      user,
    );
    // kubectl reads the pod first; the subresource itself is refused too.
    refused(
      `${me} POST pods/exec of ${pod}`,
      as(
        me,
        [
          'create',
          '--raw',
          `/api/v1/namespaces/${ns}/pods/${pod}/exec?command=node&command=-e&command=0&stdout=true`,
          '-f',
          '-',
        ],
        '{}',
      ),
      'create',
      'pods/exec',
      ns,
      user,
    );
    const pf = await portForward(me, ns, pod);
    const pfText = pf.text;
    check(
      `${me} kubectl port-forward ${pod}`,
      !pf.ok &&
        pfText.includes('forbidden') &&
        pfText.includes(`User "${user}"`) &&
        pfText.includes(`in the namespace "${ns}"`),
      pfText,
    );
    refused(
      `${me} GET pods/portforward of ${pod}`,
      as(me, ['get', '--raw', `/api/v1/namespaces/${ns}/pods/${pod}/portforward?ports=8080`]),
      'get',
      'pods/portforward',
      ns,
      user,
    );
    refused(
      `${me} POST a pod into ${ns}`,
      as(
        me,
        ['create', '--raw', `/api/v1/namespaces/${ns}/pods`, '-f', '-'],
        targetPod(other).replace(`"${other}-target"`, `"${me}-intruder"`),
      ),
      'create',
      'pods',
      ns,
      user,
    );
    // And on their own pod, the same commands work: the refusals are about whose pod it is.
    const exec = as(me, [
      '-n',
      nsOf(me),
      'exec',
      `${me}-target`,
      '--',
      'node',
      '-e',
      'console.log(process.env.POD_NAME ?? "in")',
    ]);
    check(
      `${me} kubectl exec into own ${me}-target`,
      exec.status === 0,
      `exit ${exec.status} ${oneLine(exec.stdout || exec.stderr)}`,
    );
    const own = await portForward(me, nsOf(me), `${me}-target`);
    check(`${me} kubectl port-forward own ${me}-target`, own.ok, own.text);
  }
  const untouched = admin([
    'get',
    'pods',
    '-A',
    '-l',
    'app.kubernetes.io/name=termlab-class-check',
    '-o',
    'jsonpath={range .items[*]}{.metadata.namespace}/{.metadata.name}:{.metadata.labels.touched}{" "}{end}',
  ]);
  check(
    'both target pods still there, unpatched',
    untouched.stdout.trim().split(' ').sort().join(' ') === 'termlab-alice/alice-target: termlab-bob/bob-target:',
    untouched.stdout.trim(),
  );

  // 5. A full quota: alice's cut to the one pod she has; a run waits, says so, and ends with exit 3 naming it.
  const cut = admin([
    '-n',
    nsOf('alice'),
    'patch',
    'resourcequota',
    'termlab-quota',
    '--type=merge',
    '-p',
    '{"spec":{"hard":{"pods":"1"}}}',
  ]);
  check("instructor cuts termlab-alice's quota to 1 pod", cut.status === 0, oneLine(cut.stdout || cut.stderr));
  const full = termlab(
    [
      'run',
      '--kubeconfig',
      join(dir, 'alice.kubeconfig'),
      '--only',
      'short-grace',
      '--lab',
      'manifests/lab.yaml',
      '--output-dir',
      join(dir, 'alice-full'),
      '--quota-wait',
      '8',
    ],
    { TERMLAB_STATE_DIR: join(dir, 'alice-state') },
  );
  const waited = /waiting for the class quota: 1 of 1 pods in use \(termlab-quota in termlab-alice\)/.test(full.stdout);
  const named = /QUOTA_FULL: the class quota termlab-quota in termlab-alice stayed full/.test(full.stderr);
  check(
    'a run on a full quota waits, then exit 3 naming the quota',
    full.status === 3 && waited && named && !/\n\s+at /.test(full.stderr),
    `exit ${full.status}; ${oneLine(full.stderr)}`,
  );
  const count = admin(['-n', nsOf('alice'), 'get', 'pods', '-o', 'name']);
  check(
    'no pod over the quota',
    count.stdout.trim().split('\n').filter(Boolean).length <= 1,
    count.stdout.trim().replace(/\n/g, ' '),
  );
  admin([
    '-n',
    nsOf('alice'),
    'patch',
    'resourcequota',
    'termlab-quota',
    '--type=merge',
    '-p',
    '{"spec":{"hard":{"pods":"8"}}}',
  ]);

  // 6. The class-wide reaper, as its own ServiceAccount, finds an expired pod in each student's namespace.
  for (const s of STUDENTS) {
    const expired = targetPod(s, {
      metadata: {
        name: `${s}-expired`,
        labels: {
          'app.kubernetes.io/managed-by': 'termlab',
          'termlab.io/env': ENV,
          'termlab.io/owner': ownerLabelFor(`system:serviceaccount:${CLASS}:${s}`),
          'termlab.io/run': 'run-class-check',
        },
        finalizers: ['termlab.io/hold'],
      },
      spec: { activeDeadlineSeconds: 1 },
    });
    const r = as(s, ['apply', '-f', '-'], expired);
    check(`${s} leaves an expired lab pod`, r.status === 0, oneLine(r.stdout || r.stderr));
  }
  const token = admin(['-n', CLASS, 'create', 'token', 'termlab-reaper', '--duration=10m']);
  const { renderStudentKubeconfig, clusterOf } = await import('../../harness/class/student-kubeconfig.ts');
  const { connect } = await import('../../harness/kube/index.ts');
  const current = (await connect({ kubeconfig, context: CONTEXT })).kc.getCurrentCluster()!;
  writeFileSync(
    join(dir, 'reaper.kubeconfig'),
    renderStudentKubeconfig({
      cluster: clusterOf(current),
      student: 'reaper',
      namespace: CLASS,
      token: token.stdout.trim(),
      expiresAt: 'in 10 minutes',
    }),
    { mode: 0o600 },
  );
  // Past the 1 s deadline (the pods were made above; the kubelet needs no part in it).
  await new Promise((resolve) => setTimeout(resolve, 2_000));
  const reap = termlab([
    'reap',
    '--all-owners',
    '--class',
    CLASS,
    '--env',
    ENV,
    '--kubeconfig',
    join(dir, 'reaper.kubeconfig'),
  ]);
  console.log(
    reap.stdout
      .trim()
      .split('\n')
      .map((l) => `       ${l}`)
      .join('\n'),
  );
  const deleted = STUDENTS.every((s) => new RegExp(`^deleted\\s+${s}-expired `, 'm').test(reap.stdout));
  check(
    "reap --all-owners --class termlab (as termlab-reaper) takes both students' expired pods",
    reap.status === 0 && deleted,
    oneLine(reap.stdout || reap.stderr),
  );
}

const WITNESS_NS = `${CLASS}-witness`;
/** alice's records (ConfigMap name -> resourceVersion) just before the witness pod was killed. */
let witnessBefore = new Map<string, string>();

function witnessRecordVersions(): Map<string, string> {
  const r = admin([
    '-n',
    WITNESS_NS,
    'get',
    'configmaps',
    '-l',
    'termlab.io/witness=pod',
    '-o',
    'jsonpath={range .items[*]}{.metadata.name}={.metadata.resourceVersion}{" "}{end}',
  ]);
  return new Map(
    r.stdout
      .trim()
      .split(' ')
      .filter(Boolean)
      .map((pair) => pair.split('=') as [string, string]),
  );
}

const WITNESS_DEPLOYMENT = 'termlab-witness';
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * The witness Deployment's pod (another than `previous`, the one just killed), once its log (kubectl logs) has
 * the witness's `listed` line: it has read its records back and listed the lab pods. Its name, or null after
 * 120 s, the check then saying the pod's state, its last log line and where the `kubernetes` Service leads.
 */
async function witnessPodListed(previous: string | null): Promise<string | null> {
  const deadline = Date.now() + 120_000;
  let pod: Json | null = null;
  let log = '';
  while (Date.now() < deadline) {
    const r = admin([
      '-n',
      WITNESS_NS,
      'get',
      'pods',
      '-l',
      `app.kubernetes.io/name=${WITNESS_DEPLOYMENT}`,
      '-o',
      'json',
    ]);
    const items = r.status === 0 ? ((JSON.parse(r.stdout) as Json).items as Json[]) : [];
    pod = items.find((p) => p.metadata.name !== previous && !p.metadata.deletionTimestamp) ?? null;
    if (pod) {
      const logs = admin(['-n', WITNESS_NS, 'logs', `pod/${pod.metadata.name}`]);
      log = `${logs.stdout}${logs.stderr}`;
      const listed = logs.stdout.split('\n').find((l) => l.includes('"event":"listed"'));
      if (listed) {
        const container = pod.status?.containerStatuses?.[0] ?? {};
        check(
          `the witness pod ${pod.metadata.name} (${WITNESS_NS}/${WITNESS_DEPLOYMENT}, ${container.imageID ?? 'image ?'}) has listed the lab pods`,
          true,
          listed,
        );
        return pod.metadata.name as string;
      }
    }
    await sleep(1_000);
  }
  const endpoints = admin(['get', 'endpoints', 'kubernetes', '-o', 'jsonpath={.subsets}']);
  check(
    `the witness pod${pod ? ` ${pod.metadata.name}` : ''} (${WITNESS_NS}/${WITNESS_DEPLOYMENT}) has listed the lab pods`,
    false,
    pod
      ? `not within 120 s: ${JSON.stringify(pod.status?.containerStatuses?.[0]?.state ?? pod.status?.phase)}; log: ${oneLine(log) || 'empty'}; endpoints kubernetes: ${endpoints.stdout.trim() || oneLine(endpoints.stderr)}`
      : `no pod of the Deployment${previous ? ` besides ${previous}` : ''} within 120 s`,
  );
  return null;
}

type Json = Record<string, any>;
const readJson = (file: string) => JSON.parse(readFileSync(file, 'utf8')) as Json;
const observationsIn = (dir: string) => readdirSync(dir).filter((f) => f.endsWith('.observation.json'));

/** Every harness time ({mono, wall}) at or after `fromWall`, and every finishedAt, moved by `ms`: a consistent forgery. */
function moveFrom(node: unknown, fromWall: number, ms: number): void {
  if (Array.isArray(node)) {
    for (const n of node) moveFrom(n, fromWall, ms);
    return;
  }
  if (!node || typeof node !== 'object') return;
  const o = node as Json;
  if (typeof o.wall === 'string' && typeof o.mono === 'number' && Date.parse(o.wall) >= fromWall) {
    o.wall = new Date(Date.parse(o.wall) + ms).toISOString();
    o.mono += ms;
  }
  if (typeof o.finishedAt === 'string')
    o.finishedAt = new Date(Date.parse(o.finishedAt) + ms).toISOString().replace('.000Z', 'Z');
  for (const value of Object.values(o)) moveFrom(value, fromWall, ms);
}

/** The hand-ins, graded against the witness on the cluster and from its export; bob's attempts on the records. */
async function witnessChecks(): Promise<void> {
  // Nothing lost in the kill: alice's records are as they were, and every lab pod of both runs has one, ended.
  const after = witnessRecordVersions();
  const kept = [...witnessBefore].filter(([name, version]) => after.get(name) === version);
  check(
    "the witness's kill lost and rewrote no record",
    witnessBefore.size > 0 && kept.length === witnessBefore.size,
    `${kept.length} of ${witnessBefore.size} records from before the kill unchanged; ${after.size} records now`,
  );
  const uids = STUDENTS.flatMap((s) =>
    observationsIn(join(dir, `${s}-run`)).map((f) => readJson(join(dir, `${s}-run`, f)).pod.uid as string),
  );
  const records = new Map(
    uids.map((uid) => {
      const r = admin(['-n', WITNESS_NS, 'get', 'configmap', `pod-${uid}`, '-o', 'jsonpath={.data.record\\.json}']);
      return [uid, r.status === 0 ? (JSON.parse(r.stdout) as Json) : null];
    }),
  );
  const whole = [...records.values()].filter((r) => r?.goneAt && r.containers.length && r.deletionTimestamp);
  check(
    'every lab pod of both runs has a whole record (its end, its deletion, when gone)',
    whole.length === uids.length,
    [...records]
      .map(
        ([uid, r]) =>
          `${uid.slice(0, 8)}:${r ? `${r.student}/${r.scenario} exit ${r.containers[0]?.exitCode} grace ${r.grace} events ${r.events.map((e: Json) => e.reason).join('+')}` : 'none'}`,
      )
      .join('; '),
  );

  // The hand-ins: each student's own run, a copy of alice's handed in by bob, a forgery and a moved finishedAt.
  const subs = join(dir, 'handins');
  const hand = (from: string, as: string) => {
    const to = join(subs, as);
    mkdirSync(to, { recursive: true });
    cpSync(join(dir, `${from}-run`), to, { recursive: true });
    return to;
  };
  const alice = hand('alice', 'own/alice');
  const bob = hand('bob', 'own/bob');
  const copy = hand('alice', 'copy/bob');
  const forged = hand('alice', 'forged/alice');
  for (const f of observationsIn(forged)) {
    const text = readFileSync(join(forged, f), 'utf8');
    const uid = (JSON.parse(text) as Json).pod.uid as string;
    // Every mention of the pod's UID replaced: the file agrees with itself, about a pod that never was.
    writeFileSync(join(forged, f), text.split(uid).join(randomUUID()));
  }
  const moved = hand('alice', 'moved/alice');
  const short = observationsIn(moved).find((f) => f.startsWith('short-grace'))!;
  const o = readJson(join(moved, short));
  const originalFinished = o.finalState.finishedAt as string;
  moveFrom(o, Date.parse(o.timeline.containerTerminated.at.wall), 3_000);
  writeFileSync(join(moved, short), JSON.stringify(o, null, 2));
  const paths = [alice, bob, copy, forged, moved];
  const gradeArgs = (book: string) => [
    'grade',
    ...paths,
    '--gradebook',
    `${book}.csv`,
    '--gradebook-json',
    `${book}.json`,
  ];
  const live = termlab([
    ...gradeArgs(join(dir, 'live')),
    '--witness',
    '--kubeconfig',
    kubeconfig,
    '--context',
    CONTEXT,
  ]);
  console.log(
    live.stdout
      .trim()
      .split('\n')
      .filter((l) => /vouched|witness/.test(l))
      .map((l) => `       ${l}`)
      .join('\n'),
  );
  check('grade --witness: exit 4 (review)', live.status === 4, `exit ${live.status} ${oneLine(live.stderr)}`);
  const rows = live.status === 4 ? (readJson(join(dir, 'live.json')).rows as Json[]) : [];
  const vouched = (path: string) => rows.find((r) => r.submission === path)?.vouched ?? 'no row';
  check("alice's lab pair vouched yes", vouched(alice) === 'yes', vouched(alice));
  check("bob's lab pair vouched yes", vouched(bob) === 'yes', vouched(bob));
  check(
    "a copy of alice's run handed in by bob: mismatch: owner",
    vouched(copy) === 'mismatch: owner (witness alice, hand-in bob)',
    vouched(copy),
  );
  check(
    'a consistent forgery with a UID the cluster never had: no record',
    vouched(forged) === 'no record',
    vouched(forged),
  );
  check(
    'a real file with finishedAt moved 3 s, and every later claim with it: mismatch: finishedAt',
    vouched(moved) === `mismatch: finishedAt (witness ${originalFinished}, hand-in ${o.finalState.finishedAt})`,
    vouched(moved),
  );

  // Offline: the records exported, and the same gradebook from the file.
  const exported = termlab([
    'class',
    'witness',
    'export',
    '--output-file',
    join(dir, 'witness.json'),
    '--kubeconfig',
    kubeconfig,
    '--context',
    CONTEXT,
  ]);
  check('class witness export', exported.status === 0, oneLine(exported.stdout || exported.stderr));
  const offline = termlab([...gradeArgs(join(dir, 'offline')), '--witness-file', join(dir, 'witness.json')]);
  const same =
    offline.status === live.status &&
    live.status === 4 &&
    readFileSync(join(dir, 'offline.csv'), 'utf8') === readFileSync(join(dir, 'live.csv'), 'utf8');
  check(
    'grade --witness-file (offline): the same gradebook, the same vouched column',
    same,
    `exit ${offline.status}; CSVs ${same ? 'identical' : 'differ'}`,
  );

  // bob may read the records, and nothing more.
  const record = `pod-${uids[0]}`;
  const user = `system:serviceaccount:${CLASS}:bob`;
  const read = as('bob', ['-n', WITNESS_NS, 'get', 'configmap', record, '-o', 'name']);
  check('bob can read a witness record', read.status === 0, oneLine(read.stdout || read.stderr));
  refused(
    'bob creates a witness record',
    as('bob', ['-n', WITNESS_NS, 'create', 'configmap', 'pod-forged', '--from-literal=record.json={}']),
    'create',
    'configmaps',
    WITNESS_NS,
    user,
  );
  refused(
    `bob patches ${record}`,
    as('bob', ['-n', WITNESS_NS, 'patch', 'configmap', record, '-p', '{"data":{"record.json":"{}"}}']),
    'patch',
    'configmaps',
    WITNESS_NS,
    user,
  );
  const got = as('bob', ['-n', WITNESS_NS, 'get', 'configmap', record, '-o', 'json']);
  const replaced = got.status === 0 ? { ...JSON.parse(got.stdout), data: { 'record.json': '{}' } } : {};
  refused(
    `bob replaces (updates) ${record}`,
    as('bob', ['replace', '-f', '-'], JSON.stringify(replaced)),
    'update',
    'configmaps',
    WITNESS_NS,
    user,
  );
  refused(
    `bob deletes ${record}`,
    as('bob', ['-n', WITNESS_NS, 'delete', 'configmap', record]),
    'delete',
    'configmaps',
    WITNESS_NS,
    user,
  );
  const intact = witnessRecordVersions().get(record);
  check(
    `${record} untouched after bob's attempts`,
    intact !== undefined && intact === after.get(record),
    `resourceVersion ${intact}`,
  );
}

/** Leave the node as found: any pod still held by termlab's finalizer let go, then the students' namespaces and the class. */
function cleanup(): void {
  for (const s of STUDENTS) {
    const held = admin([
      '-n',
      nsOf(s),
      'get',
      'pods',
      '-o',
      'jsonpath={range .items[?(@.metadata.finalizers)]}{.metadata.name}{" "}{end}',
    ]);
    for (const pod of held.stdout.trim().split(' ').filter(Boolean))
      admin([
        '-n',
        nsOf(s),
        'patch',
        'pod',
        pod,
        '--type=json',
        '-p',
        '[{"op":"remove","path":"/metadata/finalizers"}]',
      ]);
  }
  const gone = admin(['delete', 'namespace', ...STUDENTS.map(nsOf), '--ignore-not-found', '--wait=false']);
  const cls = admin(['delete', '-f', join(REPO, 'manifests/class.yaml'), '--ignore-not-found', '--wait=false']);
  console.log(
    `cleanup: ${[gone, cls].map((r) => (r.status === 0 ? r.stdout.trim().split('\n').length + ' deleted' : oneLine(r.stderr))).join('; ')}`,
  );
}

const tool = {
  name: 'test:cluster:class',
  usage: 'npm run test:cluster:class -- [--keep]',
  onInterrupt: endForwards,
};

await runDevTool(tool, async () => {
  const { values } = devArgs(tool, { keep: { type: 'boolean' } });
  dir = mkdtempSync(join(tmpdir(), 'termlab-class-'));
  await main().catch((error: unknown) => {
    check('class check', false, error instanceof Error ? (error.stack ?? error.message) : String(error));
  });
  if (!values.keep) cleanup();
  console.log(`\nclass_check_seconds: ${Math.round((Date.now() - started) / 1000)}`);
  console.log(`class_checks_failed: ${failures.length}`);
  if (failures.length) throw new TermlabError('CHECKS_FAILED', `${failures.length} class checks failed (above)`);
});
