// kind:up and kind:down as real processes. Docker and kind cannot run on these machines, so the
// programs they drive are small stand-ins on PATH that record their arguments and answer as the
// case needs; what is checked is the exact command lines and the one-line messages.
import { spawn } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  CLUSTER_NAME,
  CONTEXT,
  DEFAULT_KUBE_MINOR,
  KIND_CONFIG,
  KIND_NODE_IMAGES,
  KIND_VERSION,
  KUBE_MINORS,
  KUBECTL_VERSION,
  LAB_IMAGE_REFERENCE,
  REPO,
  RUN_LINE,
  kindNodeImage,
} from '../../dev/kind/versions.ts';
import { exitCodeFor } from '../../lib/errors.ts';

// The exit codes the tools end with, from the one table: a setup problem the user can fix, a bad argument.
const EXIT_SETUP_FAILED = exitCodeFor('SETUP_FAILED');
const EXIT_USAGE = exitCodeFor('USAGE');

// Each case has its own folder of stand-ins and its own call log, so that the cases run side by side:
// each spawns the script as a real process and waits for it, and that start-up is most of their time.
interface Bench {
  bin: string;
  stub(name: string, body?: string): void;
  npmScript(script: 'up' | 'down', args?: string[]): Promise<Ran>;
}
interface Ran {
  status: number | null;
  stdout: string;
  stderr: string;
  calls: string[];
}
const benches: string[] = [];
afterAll(() => {
  for (const dir of benches) rmSync(dir, { recursive: true, force: true });
});

function bench(): Bench {
  const bin = mkdtempSync(join(tmpdir(), 'termlab-kind-bin-'));
  benches.push(bin);
  const calls = join(bin, 'calls.log');
  writeFileSync(calls, '');
  return {
    bin,
    /** A stand-in program: logs its arguments, then runs `body` (POSIX sh builtins only: PATH holds nothing else). */
    stub(name, body = 'exit 0') {
      const file = join(bin, name);
      writeFileSync(file, `#!/bin/sh\necho "${name} $*" >> "${calls}"\n${body}\n`);
      chmodSync(file, 0o755);
    },
    npmScript(script, args = []) {
      return new Promise((resolve) => {
        const child = spawn(process.execPath, ['--import', 'tsx', join(REPO, `dev/kind/${script}.ts`), ...args], {
          cwd: REPO,
          env: { ...process.env, PATH: bin },
          stdio: ['ignore', 'pipe', 'pipe'],
        });
        let stdout = '',
          stderr = '';
        child.stdout.on('data', (c: Buffer) => {
          stdout += c;
        });
        child.stderr.on('data', (c: Buffer) => {
          stderr += c;
        });
        child.on('close', (status) =>
          resolve({ status, stdout, stderr, calls: readFileSync(calls, 'utf8').trim().split('\n').filter(Boolean) }),
        );
      });
    },
  };
}

const dockerWorks = (t: Bench) => t.stub('docker', 'case "$1" in version) echo 28.2.2 ;; esac');
const kindWithClusters = (t: Bench, clusters: string, release = KIND_VERSION) =>
  t.stub(
    'kind',
    `case "$1 $2" in "version ") echo "kind ${release} go1.26.7 linux/amd64" ;; "get clusters") printf '${clusters}' ;; esac`,
  );

function oneLine(stderr: string): string {
  const lines = stderr.trim().split('\n');
  expect(lines).toHaveLength(1);
  return lines[0]!;
}

describe.concurrent('kind:up', () => {
  it('ends 1 on a setup problem and 2 on a bad argument, as before the one table', () => {
    expect([EXIT_SETUP_FAILED, EXIT_USAGE]).toEqual([1, 2]);
  });

  it('says in one line that docker is missing', async () => {
    const t = bench();
    const result = await t.npmScript('up');
    expect(result.status).toBe(EXIT_SETUP_FAILED);
    expect(oneLine(result.stderr)).toMatch(/^kind:up: docker not found on PATH: install Docker/);
  });

  it('says in one line that the docker daemon does not answer', async () => {
    const t = bench();
    t.stub('docker', 'echo "Cannot connect to the Docker daemon at unix:///var/run/docker.sock." >&2; exit 1');
    const result = await t.npmScript('up');
    expect(result.status).toBe(EXIT_SETUP_FAILED);
    expect(oneLine(result.stderr)).toBe(
      'kind:up: docker is installed but its daemon does not answer (Cannot connect to the Docker daemon at unix:///var/run/docker.sock.): start Docker',
    );
  });

  it('says in one line that kind is missing, and which release to install', async () => {
    const t = bench();
    dockerWorks(t);
    const result = await t.npmScript('up');
    expect(result.status).toBe(EXIT_SETUP_FAILED);
    expect(oneLine(result.stderr)).toBe(
      `kind:up: kind not found on PATH: install kind: go install sigs.k8s.io/kind@${KIND_VERSION} (kind.sigs.k8s.io/docs/user/quick-start)`,
    );
  });

  it('refuses in one line when the cluster already exists, and changes nothing', async () => {
    const t = bench();
    dockerWorks(t);
    kindWithClusters(t, `other\\n${CLUSTER_NAME}\\n`);
    const result = await t.npmScript('up');
    expect(result.status).toBe(EXIT_SETUP_FAILED);
    expect(oneLine(result.stderr)).toBe(
      `kind:up: a kind cluster named ${CLUSTER_NAME} already exists: use it (${RUN_LINE}) or remove it first (npm run kind:down)`,
    );
    expect(result.calls.filter((call) => / (build|create|load|apply) /.test(call))).toEqual([]);
  });

  it('builds, creates, loads and applies with the documented command lines, then prints the run line', async () => {
    const t = bench();
    dockerWorks(t);
    kindWithClusters(t, '');
    t.stub('kubectl');
    const result = await t.npmScript('up');
    expect(result.stderr).toBe('');
    expect(result.status).toBe(0);
    expect(result.calls.filter((call) => !/ (version|get clusters)/.test(call))).toEqual([
      `docker build -f server/Dockerfile --target lab -t ${LAB_IMAGE_REFERENCE} .`,
      `kind create cluster --name ${CLUSTER_NAME} --config ${KIND_CONFIG} --wait 120s`,
      `kind load docker-image ${LAB_IMAGE_REFERENCE} --name ${CLUSTER_NAME}`,
      `kubectl --context ${CONTEXT} apply -f manifests/namespace.yaml -f manifests/rbac.yaml`,
    ]);
    expect(result.stdout.trim().split('\n').at(-1)?.trim()).toBe(
      'npx termlab run --context kind-termlab --namespace termlab',
    );
  });

  it("with --kube, creates the cluster from kind v0.33.0's image for that minor, by digest", async () => {
    const t = bench();
    dockerWorks(t);
    kindWithClusters(t, '');
    t.stub('kubectl');
    const result = await t.npmScript('up', ['--kube', '1.35']);
    expect(result.stderr).toBe('');
    expect(result.status).toBe(0);
    expect(result.calls).toContain(
      `kind create cluster --name ${CLUSTER_NAME} --config ${KIND_CONFIG} --image ${KIND_NODE_IMAGES['1.35']} --wait 120s`,
    );
    expect(result.stdout).toContain('kindest/node:v1.35.8');
  });

  it('takes the published patch or a v prefix, and refuses a minor or patch kind v0.33.0 has no image for', async () => {
    const t = bench();
    dockerWorks(t);
    kindWithClusters(t, '');
    t.stub('kubectl');
    expect((await t.npmScript('up', ['--kube', 'v1.36.4'])).calls).toContain(
      `kind create cluster --name ${CLUSTER_NAME} --config ${KIND_CONFIG} --image ${KIND_NODE_IMAGES['1.36']} --wait 120s`,
    );
    for (const [value, message] of [
      ['1.34', `kind:up: --kube 1.34: kind ${KIND_VERSION} publishes node images here for ${KUBE_MINORS.join(', ')}`],
      ['1.36.3', `kind:up: --kube 1.36.3: kind ${KIND_VERSION}'s 1.36 image is kindest/node:v1.36.4; pass --kube 1.36`],
      [
        'latest',
        `kind:up: --kube latest: kind ${KIND_VERSION} publishes node images here for ${KUBE_MINORS.join(', ')}`,
      ],
    ]) {
      const result = await t.npmScript('up', ['--kube', value!]);
      expect(result.status, value).toBe(EXIT_USAGE);
      expect(oneLine(result.stderr)).toBe(message);
    }
    const unknown = await t.npmScript('up', ['--kubernetes', '1.36']);
    expect(unknown.status).toBe(EXIT_USAGE);
    expect(oneLine(unknown.stderr)).toMatch(
      /^kind:up: .*--kubernetes.* \(usage: npm run kind:up -- \[--kube 1\.37\|1\.36\|1\.35\]\)$/,
    );
  });

  it('refuses a kind older than v0.32.0 in one line, naming the release to install', async () => {
    const t = bench();
    dockerWorks(t);
    kindWithClusters(t, '', 'v0.30.0');
    const result = await t.npmScript('up');
    expect(result.status).toBe(EXIT_SETUP_FAILED);
    expect(oneLine(result.stderr)).toBe(
      `kind:up: kind v0.30.0 go1.26.7 linux/amd64 is older than v0.32.0, which kindest/node:v1.37.0 needs (kubeadm v1beta4, kind load): go install sigs.k8s.io/kind@${KIND_VERSION}`,
    );
    expect(result.calls.some((call) => call.startsWith('kind create'))).toBe(false);
  });

  it('stops at a failed image build, before creating a cluster', async () => {
    const t = bench();
    t.stub('docker', 'case "$1" in version) echo 28.2.2 ;; build) exit 1 ;; esac');
    kindWithClusters(t, '');
    const result = await t.npmScript('up');
    expect(result.status).toBe(EXIT_SETUP_FAILED);
    expect(oneLine(result.stderr)).toMatch(/^kind:up: docker build .* exited 1$/);
    expect(result.calls.some((call) => call.startsWith('kind create'))).toBe(false);
  });
});

describe.concurrent('kind:down', () => {
  it('deletes only the lab cluster', async () => {
    const t = bench();
    kindWithClusters(t, `${CLUSTER_NAME}\\nother\\n`);
    const result = await t.npmScript('down');
    expect(result.status).toBe(0);
    expect(result.calls).toEqual(['kind get clusters', `kind delete cluster --name ${CLUSTER_NAME}`]);
  });

  it('is a no-op when there is no such cluster', async () => {
    const t = bench();
    kindWithClusters(t, 'other\\n');
    const result = await t.npmScript('down');
    expect(result.status).toBe(0);
    expect(result.stdout.trim()).toBe(`kind:down: no kind cluster named ${CLUSTER_NAME}; nothing to do`);
    expect(result.calls).toEqual(['kind get clusters']);
  });
});

describe('manifests/kind-config.yaml', () => {
  it("pins kind v0.33.0's default node image, 1.37, by digest; kubectl is of its version", () => {
    expect(kindNodeImage()).toBe(KIND_NODE_IMAGES[DEFAULT_KUBE_MINOR]);
    expect(KIND_NODE_IMAGES[DEFAULT_KUBE_MINOR]).toBe(
      'kindest/node:v1.37.0@sha256:a1ed56cfb0e7b93589bdf97c8cd566405a265939e3620fc4f5de89adff580ae5',
    );
    expect(KUBECTL_VERSION).toBe('v1.37.0');
    expect(KUBE_MINORS).toEqual(['1.37', '1.36', '1.35']);
  });

  it('takes kubeadm patches for v1beta4 or no apiVersion, and names the file and field of one for v1beta3', () => {
    const config = (patch: string) => {
      const file = join(bench().bin, 'kind-config.yaml');
      const indented = patch
        .split('\n')
        .map((line) => `      ${line}`)
        .join('\n');
      writeFileSync(
        file,
        `kind: Cluster\napiVersion: kind.x-k8s.io/v1alpha4\nnodes:\n  - role: control-plane\n    image: ${KIND_NODE_IMAGES['1.37']}\n    kubeadmConfigPatches:\n    - |\n${indented}\n`,
      );
      return file;
    };
    expect(
      kindNodeImage(
        config('kind: InitConfiguration\nnodeRegistration:\n  kubeletExtraArgs:\n    - name: v\n      value: "2"'),
      ),
    ).toBe(KIND_NODE_IMAGES['1.37']);
    expect(kindNodeImage(config('apiVersion: kubeadm.k8s.io/v1beta4\nkind: ClusterConfiguration'))).toBe(
      KIND_NODE_IMAGES['1.37'],
    );
    const old = config('apiVersion: kubeadm.k8s.io/v1beta3\nkind: ClusterConfiguration');
    expect(() => kindNodeImage(old)).toThrow(
      `${old}: nodes.0.kubeadmConfigPatches.0: patches kubeadm.k8s.io/v1beta3: kind ${KIND_VERSION} writes kubeadm.k8s.io/v1beta4 for 1.36+; name kubeadm.k8s.io/v1beta4 or no apiVersion`,
    );
  });
});
