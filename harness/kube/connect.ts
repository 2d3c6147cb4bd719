// The client objects: a kubeconfig, its context, and the one ApiHealth every call of a run shares.
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import * as k8s from '@kubernetes/client-node';
import { TermlabError } from '../../lib/errors.ts';
import { apiErrorText } from './failures.ts';
import { ApiHealth } from './retry.ts';

export interface Cluster {
  kc: k8s.KubeConfig;
  /** The generated client, without retry: harness code calls the functions of kube/ instead. */
  core: k8s.CoreV1Api;
  context: string;
  server: string;
  serverVersion: string | null;
  /** The context's own namespace, if it names one. */
  contextNamespace: string | null;
  health: ApiHealth;
}

export interface ConnectOptions {
  kubeconfig?: string;
  kubeconfigText?: string;
  context?: string;
  /** The outage budget (--api-patience), ms. */
  apiPatienceMs?: number;
  /** One request's own time limit, ms. */
  requestTimeoutMs?: number;
  /** The command has --sim: with no kubeconfig to be found, the hint offers it (a command without it never names it). */
  offersSim?: boolean;
}

/** Loads the kubeconfig, picks the context and asks the API server its version: unreachable is exit 3. */
export async function connect(options: ConnectOptions): Promise<Cluster> {
  const kc = new k8s.KubeConfig();
  const where =
    options.kubeconfig ??
    (options.kubeconfigText ? 'the simulated cluster' : process.env.KUBECONFIG || '~/.kube/config');
  try {
    if (options.kubeconfigText) kc.loadFromString(options.kubeconfigText);
    else if (options.kubeconfig) kc.loadFromFile(options.kubeconfig);
    else if (process.env.KUBECONFIG || existsSync(join(homedir(), '.kube', 'config'))) kc.loadFromDefault();
    else
      throw new Error(
        options.offersSim
          ? 'none found: set KUBECONFIG, pass --kubeconfig FILE, or run on the simulated cluster with --sim'
          : 'none found: set KUBECONFIG or pass --kubeconfig FILE',
      );
  } catch (error) {
    throw new TermlabError('CLUSTER_UNREACHABLE', `cannot load kubeconfig ${where}: ${(error as Error).message}`, {
      kubeconfig: where,
    });
  }
  if (options.context) {
    if (!kc.getContextObject(options.context)) {
      throw new TermlabError(
        'CLUSTER_UNREACHABLE',
        `context "${options.context}" is not in ${where} (it has: ${
          kc
            .getContexts()
            .map((c) => c.name)
            .join(', ') || 'none'
        })`,
        { context: options.context },
      );
    }
    kc.setCurrentContext(options.context);
  }
  const context = kc.getCurrentContext();
  const server = kc.getCurrentCluster()?.server;
  if (!context || !server)
    throw new TermlabError('CLUSTER_UNREACHABLE', `${where} has no current context with a cluster`, {
      kubeconfig: where,
    });
  const health = new ApiHealth(options.apiPatienceMs, options.requestTimeoutMs);
  // At the start one try is enough: a wrong address should fail at once, not after the budget.
  let serverVersion: string | null = null;
  try {
    serverVersion = (await kc.makeApiClient(k8s.VersionApi).getCode(timeoutOptions(health.requestTimeoutMs)))
      .gitVersion;
  } catch (error) {
    throw new TermlabError(
      'CLUSTER_UNREACHABLE',
      `cannot reach the cluster of context "${context}" at ${server}: ${apiErrorText(error)}`,
      { context, server },
    );
  }
  return {
    kc,
    core: kc.makeApiClient(k8s.CoreV1Api),
    context,
    server,
    serverVersion,
    contextNamespace: kc.getContextObject(context)?.namespace ?? null,
    health,
  };
}

/** Per-request options for the generated client: a time limit on the whole request. */
export function timeoutOptions(timeoutMs: number): k8s.ConfigurationOptions {
  const pass = <T>(value: T) => new k8s.Observable(Promise.resolve(value));
  return {
    middleware: [
      {
        pre: (request) => {
          request.setSignal(AbortSignal.timeout(timeoutMs));
          return pass(request);
        },
        post: (response) => pass(response),
      },
    ],
    middlewareMergeStrategy: 'append',
  };
}
