// `termlab verify deployment/NAME`: parse, connect (or start the simulated cluster and create the
// --apply objects on it), read and print the plan, ask for --yes (unless the cluster is the
// simulated one), run, write the one observation file, grade it back from the file exactly as
// `termlab grade` does, write the reports, and exit as `run` does.
import type * as k8s from '@kubernetes/client-node';
import { join, resolve } from 'node:path';
import type { CommandIO, CommandModule, Values } from '../../lib/command.ts';
import { EXIT, exitCodeFor, isTermlabError, TermlabError, unwritable } from '../../lib/errors.ts';
import { makeDirectory } from '../../lib/files.ts';
import { proxySyncDelayMs } from '../../lib/proxy-delay.ts';
import { type Cluster, connect, DEFAULT_API_PATIENCE_MS, listPods } from '../kube/index.ts';
import { parseEdgeUrl, parseVia } from '../edge/find.ts';
import { findEdge } from './edge.ts';
import { formatted, isData } from '../../lib/output-format.ts';
import { escapeTerminal as t } from '../../lib/terminal.ts';
import { RunClock } from '../run/clock.ts';
import type { StartSim } from '../run/command.ts';
import { ownershipOf, whoAmI } from '../safety/identity.ts';
import { defaultOwnerId, isLabelValue, newRunId } from '../safety/labels.ts';
import { newRunRecord, saveRun } from '../safety/runs.ts';
import { sweepRun } from '../safety/sweep.ts';
import { loadTemplate } from '../scenario/load.ts';
import { HARNESS_VERSION } from '../../lib/version.ts';
import { createManifests, readManifests, waitAvailable } from './apply.ts';
import { gradeVerificationFile, writeVerification, writeVerifyReports } from './files.ts';
import type { verifyFlags } from './flags.ts';
import { exitCodeOfGrade } from './grade.ts';
import {
  ActionSchema,
  MAX_VERIFICATION_BYTES,
  VERIFICATION_SUFFIX,
  type VerifyRequest,
} from '../observation/verification.ts';
import { defaultConnections, renderVerifyLoadPod } from './load-pod.ts';
import { preflight } from './preflight.ts';
import { checkLoadFits } from './size.ts';
import { objectNames, runVerification, temporaryService, verifyBoundsMs } from './run.ts';
import { planText, readTarget } from './target.ts';
import { terminalSummary } from './report.ts';

const DNS_NAME = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DEFAULT_LOAD_IMAGE = 'termlab/lab-server:0.1.0';

function whole(value: string | undefined, flag: string, fallback: number, min: number, max: number): number {
  if (value === undefined) return fallback;
  if (!/^\d+$/.test(value) || Number(value) < min || Number(value) > max)
    throw new TermlabError('USAGE', `${flag}: expected a whole number ${min}-${max}, got ${JSON.stringify(value)}`);
  return Number(value);
}

/** `deployment/NAME` (also `deploy/NAME`, `deployments/NAME`, `deployment.apps/NAME`), as kubectl writes it. */
export function parseTarget(positionals: string[]): string {
  if (positionals.length !== 1)
    throw new TermlabError(
      'USAGE',
      `verify needs one target, deployment/NAME${positionals.length ? `; got ${positionals.length}: ${positionals.join(' ')}` : ''}`,
    );
  const m = /^(deployment|deployments|deploy|deployment\.apps)\/(.+)$/.exec(positionals[0]!);
  if (!m)
    throw new TermlabError(
      'USAGE',
      `${JSON.stringify(positionals[0])}: expected deployment/NAME (only Deployments can be verified)`,
    );
  const name = m[2]!;
  if (name.length > 253 || !DNS_NAME.test(name))
    throw new TermlabError(
      'USAGE',
      `deployment/${name}: not a valid Deployment name (lower-case letters, digits and -, starting and ending alphanumeric)`,
    );
  return name;
}

/** `--sim` and its companions: checked before anything starts; the manifests read, not yet applied. */
async function simPlan(values: Record<string, string | boolean | undefined>, deployment: string) {
  if (values.sim && (values.context || values.kubeconfig))
    throw new TermlabError('USAGE', '--sim starts its own cluster: leave out --context and --kubeconfig');
  for (const flag of ['apply', 'proxy-sync-delay-ms', 'kube-version', 'feature-gates'] as const) {
    if (values[flag] !== undefined && !values.sim)
      throw new TermlabError(
        'USAGE',
        `--${flag}: only with --sim (on a real cluster verify changes only the named Deployment: create your objects with kubectl first)`,
      );
  }
  if (!values.sim) return null;
  const apply = values.apply as string | undefined;
  if (!apply)
    throw new TermlabError(
      'USAGE',
      `--sim starts an empty simulated cluster: give --apply FILE with deployment/${deployment} (and its Service) in it, e.g. --apply manifests/verify-example.yaml`,
    );
  const delay = proxySyncDelayMs(values['proxy-sync-delay-ms'] as string | undefined);
  const namespace = (values.namespace as string | undefined) ?? 'default';
  return {
    manifests: await readManifests(apply, namespace, deployment),
    options: {
      proxySyncDelayMs: delay,
      kubeVersion: values['kube-version'] as string | undefined,
      featureGates: values['feature-gates'] as string | undefined,
      // Through a route, the simulated cluster runs the edge too (Traefik, its Gateway and IngressClass).
      edge: values.via !== undefined,
    },
  };
}

// The command as the CLI shows and parses it is harness/cli/commands/verify.ts.
export function createVerifyCommand(startSim: StartSim): CommandModule<typeof verifyFlags> {
  return {
    async run(values, positionals, io) {
      const deployment = parseTarget(positionals);
      const action = ActionSchema.safeParse(values.action ?? 'rollout-restart');
      if (!action.success)
        throw new TermlabError(
          'USAGE',
          `--action: expected rollout-restart or delete-pod, got ${JSON.stringify(values.action)}`,
        );
      const path = values.path ?? '/';
      if (!path.startsWith('/') || /[\s#]/.test(path))
        throw new TermlabError(
          'USAGE',
          `--path: expected a path such as /healthz or '/work?ms=200' (starting with /, no spaces or #), got ${JSON.stringify(path)}`,
        );
      if (values.service !== undefined && !DNS_NAME.test(values.service))
        throw new TermlabError('USAGE', `--service: ${JSON.stringify(values.service)} is not a valid Service name`);
      if (values['pod-header'] !== undefined && !/^[A-Za-z0-9-]+$/.test(values['pod-header']))
        throw new TermlabError('USAGE', `--pod-header: ${JSON.stringify(values['pod-header'])} is not a header name`);
      if (values.owner !== undefined && !isLabelValue(values.owner))
        throw new TermlabError('USAGE', `--owner: ${JSON.stringify(values.owner)} is not a valid label value`);
      const readyTimeoutMs = whole(values['ready-timeout'], '--ready-timeout', 120, 1, 3600) * 1000;
      const apiPatienceMs =
        whole(values['api-patience'], '--api-patience', DEFAULT_API_PATIENCE_MS / 1000, 0, 3600) * 1000;
      const rate = whole(values.rate, '--rate', 50, 1, 10_000);
      const method = (values.method ?? 'GET') as 'GET' | 'POST';
      if (method !== 'GET' && method !== 'POST')
        throw new TermlabError('USAGE', `--method: expected GET or POST, got ${JSON.stringify(values.method)}`);
      if (values.via !== undefined) parseVia(values.via);
      if (values.url !== undefined) parseEdgeUrl(values.url);
      if (values.via !== undefined && values.url !== undefined)
        throw new TermlabError('USAGE', '--via and --url: give one (--url is for an edge termlab cannot read)');
      const requestFields = {
        deployment,
        service: values.service ?? null,
        port: values.port === undefined ? null : whole(values.port, '--port', 0, 1, 65535),
        path,
        rate,
        connections: whole(values.connections, '--connections', defaultConnections(rate, path), 1, 1024),
        podHeader: values['pod-header'] ?? 'x-pod-uid',
        action: action.data,
        maxFailed: whole(values['max-failed'], '--max-failed', 0, 0, 1_000_000),
        loadImage: values['load-image'] ?? DEFAULT_LOAD_IMAGE,
        ...(values.method !== undefined ? { method } : {}),
      };
      const sim = await simPlan(values, deployment);
      // The one simulated cluster of this run, through the CLI's door to cluster/sim; stopped last.
      const started = sim ? await startSim(sim.options) : null;
      try {
        const cluster = await connect({
          ...(started
            ? { kubeconfigText: started.kubeconfig }
            : { kubeconfig: values.kubeconfig, context: values.context }),
          apiPatienceMs,
          offersSim: true,
        });
        const namespace = values.namespace ?? (sim ? 'default' : (cluster.contextNamespace ?? 'default'));
        if (sim) {
          io.err(
            `  applying ${sim.manifests.length} object(s) from --apply ${values.apply} to the simulated cluster\n`,
          );
          const from = await createManifests(cluster, sim.manifests, deployment);
          await waitAvailable(cluster, namespace, deployment, from, readyTimeoutMs, io.signal);
        }
        return await verifyOn(cluster, { ...requestFields, namespace }, { values, readyTimeoutMs }, io);
      } finally {
        await started?.stop();
      }
    },
  };
}

type VerifyValues = Values<typeof verifyFlags>;

/** The node the simulated cluster's pods run on (its NodePorts listen there). */
async function hostIPOf(cluster: Cluster, namespace: string): Promise<string> {
  const pods = await listPods(cluster, namespace, {});
  return pods.items.find((p) => p.status?.hostIP)?.status?.hostIP ?? '127.0.0.1';
}

async function verifyOn(
  cluster: Cluster,
  given: VerifyRequest,
  { values, readyTimeoutMs }: { values: VerifyValues; readyTimeoutMs: number },
  io: CommandIO,
): Promise<number> {
  let request = given;
  const { deployment, namespace } = request;
  const simulated = Boolean(cluster.serverVersion?.includes('termlab-sim'));
  const edge = await findEdge(
    cluster,
    { via: values.via, url: values.url, namespace, hostIP: () => hostIPOf(cluster, namespace) },
    simulated,
  );
  // Through a route, the load's Service is the route's backend unless --service names one.
  if (edge?.backend && request.service === null)
    request = { ...request, service: edge.backend.service, port: request.port ?? edge.backend.port };
  const read = await readTarget(cluster, request, simulated, edge !== null);
  const victim =
    request.action === 'delete-pod'
      ? (read.target.pods
          .filter((p) => p.ready && !p.deletionTimestamp)
          .map((p) => p.name)
          .sort()[0] ?? null)
      : null;
  io.out(
    `termlab ${HARNESS_VERSION} on context "${t(cluster.context)}" (${t(cluster.serverVersion)}${simulated ? ', the simulated cluster' : ''})\n${planText(request, read, victim, edge).split('\n').map(t).join('\n')}`,
  );
  const ownership = ownershipOf(await whoAmI(cluster, io.signal), values.owner, () =>
    defaultOwnerId(cluster.context, cluster.server),
  );
  const runId = newRunId();
  const bounds = verifyBoundsMs({ read, readyTimeoutMs });
  // Before any write, even a dry run: a load that could overfill its file is refused, not run.
  checkLoadFits(request.rate, bounds.loadMs);
  const template = await loadTemplate();
  // Every write of the plan, tried with dryRun=All first: a missing right is named before anything changes.
  const names = objectNames(request, runId);
  const victimPod = read.target.pods.find((p) => p.name === victim);
  await preflight(cluster, request, read, {
    loadPod: renderVerifyLoadPod(template, request, {
      name: names.loadPod,
      owner: ownership.owner,
      identity: ownership.identity ?? undefined,
      runId,
      target: 'http://preflight.invalid',
      durationMs: bounds.loadMs,
      deadlineSeconds: Math.ceil(bounds.loadMs / 1000) + 60,
      edge,
    }) as k8s.V1Pod,
    service: temporaryService(read, names.service, ownership.owner, runId, bounds.loadMs),
    victim: victimPod ? { name: victimPod.name, uid: victimPod.uid } : null,
  });
  if (!simulated && !values.yes)
    throw new TermlabError(
      'USAGE',
      'this changes a Deployment on a real cluster: re-run with --yes to go ahead (nothing was changed; every right it needs was checked with a dry run)',
    );

  const outDir = resolve(values['output-dir'] ?? join('reports', `verify-${runId}`));
  try {
    await makeDirectory(outDir);
  } catch (error) {
    throw unwritable('OUTPUT_UNWRITABLE', '--output-dir', outDir, error);
  }
  // The record lets `termlab reap` take the load pod (and a temporary Service) if this process dies.
  const record = newRunRecord({
    runId,
    owner: ownership.owner,
    identity: ownership.identity,
    ownerSource: ownership.source,
    ...(ownership.source === 'SelfSubjectReview' ? {} : { note: ownership.note }),
    context: cluster.context,
    namespace,
    deadline: new Date(Date.now() + bounds.loadMs + 120_000).toISOString(),
  });
  await saveRun(record);

  const clock = new RunClock();
  const { observation, failure } = await runVerification({
    cluster,
    request,
    edge,
    read,
    runId,
    owner: ownership.owner,
    identity: ownership.identity ?? undefined,
    harnessVersion: HARNESS_VERSION,
    simulated,
    template,
    clock,
    signal: io.signal,
    readyTimeoutMs,
    onPhase: (phase) => {
      if (!isData(values.output)) io.err(`  ${phase}\n`);
    },
  });
  const file = join(outDir, `${deployment}${VERIFICATION_SUFFIX}`);
  const bytes = await writeVerification(file, observation);
  let swept = false;
  try {
    swept = await sweepRun(cluster, namespace, runId);
  } catch {
    /* the record stays running: `termlab reap` finishes it */
  }
  if (swept) await saveRun({ ...record, status: io.signal.aborted ? 'interrupted' : 'finished' });

  // Past the read limit despite the check before the run (its lines longer than reckoned): the evidence is
  // kept where it was written, and said so, rather than lost; there is no verdict to read back from it.
  if (bytes > MAX_VERIFICATION_BYTES) {
    if (failure) io.err(`termlab verify: ${failure.code}: ${t(failure.message)}\n`);
    io.err(
      `termlab verify: INPUT_TOO_LARGE: the run's evidence is kept in ${t(file)}, but it is ${bytes} bytes, more than the ${MAX_VERIFICATION_BYTES}-byte limit verify and \`termlab grade\` read a verification file within: no verdict was given; run again with a lower --rate\n`,
    );
    return exitCodeFor('INPUT_TOO_LARGE');
  }

  // Bad input found before anything was changed (a path the app does not serve): no verdict to give, no
  // report to write. Said first and alone, in one line; the evidence stays in the observation file.
  if (failure && !observation.acted && exitCodeFor(failure.code) === EXIT.badInput && !io.signal.aborted) {
    io.err(`termlab verify: ${t(failure.message)}\n`);
    return EXIT.badInput;
  }

  // Graded from the file, as `termlab grade` will: the same verdict offline.
  const { grade } = await gradeVerificationFile(file);
  await writeVerifyReports(grade, observation, {
    md: join(outDir, 'report.md'),
    html: join(outDir, 'report.html'),
    junit: join(outDir, 'junit.xml'),
  });
  await writeVerifyReports(grade, observation, { md: values.md, html: values.html, junit: values.junit });
  if (isData(values.output))
    io.out(
      formatted(
        {
          verdict: grade.verdict,
          explanation: grade.explanation,
          rolloutStalled: grade.rolloutStalled,
          interrupted: grade.interrupted,
          requests: grade.requests,
          failed: grade.failed,
          byCause: grade.byCause,
          advice: grade.advice,
          reasoning: grade.reasoning,
          scope: grade.scope,
          edge: grade.edge
            ? {
                via: grade.edge.via,
                url: grade.edge.url,
                readable: grade.edge.readable,
                byCause: grade.edge.byCause,
                undecided: grade.edge.undecided,
                lags: grade.edge.lags,
              }
            : null,
          observation: file,
        },
        values.output,
      ),
    );
  else
    io.out(
      `\n${terminalSummary(grade)}\nobservation: ${t(file)} (regrade offline: termlab grade ${t(file)})\nreports: ${t(join(outDir, 'report.html'))} (also report.md, junit.xml)\n`,
    );
  if (io.signal.aborted) return EXIT.interrupted;
  if (failure) {
    io.err(`termlab verify: ${failure.code}: ${t(failure.message)}\n`);
    return exitCodeFor(failure.code);
  }
  return exitCodeOfGrade(grade);
}

/** `termlab grade` on verification files: the same grade, reports and exit code, offline. */
export async function gradeVerifications(
  paths: string[],
  targets: { output?: string; md?: string; html?: string; junit?: string },
  io: { out(text: string): void; err(text: string): void; signal: AbortSignal },
  problems: string[] = [],
): Promise<number> {
  if (paths.length > 1 && (targets.md || targets.html || targets.junit))
    throw new TermlabError('USAGE', '--md/--html/--junit with verification files: one file at a time');
  // As observations are graded: a file that cannot be read is one line (exit 2), and the others are still graded.
  const codes: number[] = problems.length ? [EXIT.badInput] : [];
  for (const p of problems) io.err(`termlab grade: ${t(p)}\n`);
  for (const path of paths) {
    let graded: Awaited<ReturnType<typeof gradeVerificationFile>>;
    try {
      graded = await gradeVerificationFile(path, io.signal);
    } catch (error) {
      if (paths.length === 1 || !isTermlabError(error) || error.code === 'INTERRUPTED') throw error;
      io.err(`termlab grade: ${t(error.message)}\n`);
      codes.push(EXIT.badInput);
      continue;
    }
    const { grade, observation } = graded;
    if (paths.length === 1) await writeVerifyReports(grade, observation, targets);
    io.out(isData(targets.output) ? formatted(grade, targets.output) : terminalSummary(grade));
    codes.push(exitCodeOfGrade(grade));
  }
  return Math.max(0, ...codes);
}
