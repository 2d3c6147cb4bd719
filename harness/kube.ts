// The one thin Kubernetes module the harness calls. It knows clusters only through a kubeconfig.
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import * as k8s from '@kubernetes/client-node';
import { TermlabError } from './errors.ts';

export interface Cluster {
  kc: k8s.KubeConfig;
  core: k8s.CoreV1Api;
  context: string;
  server: string;
  serverVersion: string | null;
}

export interface ConnectOptions {
  kubeconfig?: string;
  kubeconfigText?: string;
  context?: string;
}

function describeError(error: unknown): string {
  if (error instanceof k8s.ApiException) return `HTTP ${error.code}: ${String(error.body).slice(0, 200)}`;
  const e = error as NodeJS.ErrnoException & { cause?: NodeJS.ErrnoException };
  return [e.message, e.cause?.code ?? e.code].filter(Boolean).join(' ');
}

/** Loads the kubeconfig, picks the context and asks the API server its version: unreachable is exit 3. */
export async function connect(options: ConnectOptions): Promise<Cluster> {
  const kc = new k8s.KubeConfig();
  const where = options.kubeconfig ?? (options.kubeconfigText ? 'the simulated cluster' : process.env.KUBECONFIG ?? '~/.kube/config');
  try {
    if (options.kubeconfigText) kc.loadFromString(options.kubeconfigText);
    else if (options.kubeconfig) kc.loadFromFile(options.kubeconfig);
    else if (process.env.KUBECONFIG || existsSync(join(homedir(), '.kube', 'config'))) kc.loadFromDefault();
    else throw new Error('none found: set KUBECONFIG, pass --kubeconfig FILE, or run on the simulated cluster with --sim');
  } catch (error) {
    throw new TermlabError('CLUSTER_UNREACHABLE', `cannot load kubeconfig ${where}: ${(error as Error).message}`, { kubeconfig: where });
  }
  if (options.context) {
    if (!kc.getContextObject(options.context)) {
      throw new TermlabError('CLUSTER_UNREACHABLE', `context "${options.context}" is not in ${where} (it has: ${kc.getContexts().map((c) => c.name).join(', ') || 'none'})`, { context: options.context });
    }
    kc.setCurrentContext(options.context);
  }
  const context = kc.getCurrentContext();
  const server = kc.getCurrentCluster()?.server;
  if (!context || !server) throw new TermlabError('CLUSTER_UNREACHABLE', `${where} has no current context with a cluster`, { kubeconfig: where });
  let serverVersion: string | null = null;
  try {
    serverVersion = (await kc.makeApiClient(k8s.VersionApi).getCode()).gitVersion;
  } catch (error) {
    throw new TermlabError('CLUSTER_UNREACHABLE', `cannot reach the cluster of context "${context}" at ${server}: ${describeError(error)}`, { context, server });
  }
  return { kc, core: kc.makeApiClient(k8s.CoreV1Api), context, server, serverVersion };
}

export function isNotFound(error: unknown): boolean {
  return error instanceof k8s.ApiException && error.code === 404;
}

export function apiErrorText(error: unknown): string {
  return describeError(error);
}

/** Removes one finalizer with a JSON patch guarded by a test, so a concurrent change is not clobbered. */
export async function removeFinalizer(cluster: Cluster, namespace: string, name: string, finalizer: string): Promise<'removed' | 'absent' | 'gone'> {
  let pod: k8s.V1Pod;
  try {
    pod = await cluster.core.readNamespacedPod({ name, namespace });
  } catch (error) {
    if (isNotFound(error)) return 'gone';
    throw error;
  }
  const finalizers = pod.metadata?.finalizers ?? [];
  const index = finalizers.indexOf(finalizer);
  if (index < 0) return 'absent';
  try {
    await cluster.core.patchNamespacedPod({ name, namespace, body: [
      { op: 'test', path: `/metadata/finalizers/${index}`, value: finalizer },
      { op: 'remove', path: `/metadata/finalizers/${index}` },
    ] });
  } catch (error) {
    if (isNotFound(error)) return 'gone';
    throw error;
  }
  return 'removed';
}

/** Node name and container runtime of the node a pod runs on; null where RBAC does not allow it. */
export async function nodeInfo(cluster: Cluster, nodeName: string | undefined): Promise<{ nodeName: string | null; runtime: string | null }> {
  if (!nodeName) return { nodeName: null, runtime: null };
  try {
    const node = await cluster.core.readNode({ name: nodeName });
    return { nodeName, runtime: node.status?.nodeInfo?.containerRuntimeVersion ?? null };
  } catch {
    return { nodeName, runtime: null };
  }
}
