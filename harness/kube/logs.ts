// Container logs with the API's timestamps: a follow stream, and a whole read to recover what a
// broken stream missed (the pod is held by its finalizer, so its log is still there).
import { createInterface } from 'node:readline';
import type { Cluster } from './connect.ts';
import { classify } from './failures.ts';
import { getText, openStream, type OpenStream } from './http.ts';
import { withRetry, type RetryOptions } from './retry.ts';

export interface LogStreamCallbacks {
  line(raw: string): void;
  /** null: the stream ended (the container exited); else why it broke. */
  end(error: string | null): void;
}

const logPath = (namespace: string, pod: string) => `/api/v1/namespaces/${namespace}/pods/${pod}/log`;

/**
 * Follows a container's log (from `sinceTime`, an API timestamp, when given); resolves once the
 * API answered, retrying within the outage budget.
 */
export async function followLog(
  cluster: Cluster,
  namespace: string,
  pod: string,
  container: string,
  callbacks: LogStreamCallbacks,
  sinceTime?: string,
  options?: RetryOptions,
): Promise<{ stop(): void }> {
  const stream: OpenStream = await withRetry(
    cluster,
    `follow the log of ${namespace}/${pod}`,
    () => openStream(cluster, logPath(namespace, pod), { container, follow: true, timestamps: true, sinceTime }),
    options,
  );
  let ended = false;
  const end = (error: string | null) => {
    if (!ended) {
      ended = true;
      callbacks.end(error);
    }
  };
  // A stream cut by the API (not by the container's end) leaves the response aborted.
  stream.response.on('error', (error) => end(classify(error).text));
  stream.response.on('aborted', () => end('the log stream was cut'));
  // readline passes the stream's error on to itself: handled above, so ignored here.
  createInterface({ input: stream.response })
    .on('line', callbacks.line)
    .on('error', () => {})
    .on('close', () => end(stream.response.complete ? null : 'the log stream was cut'));
  return { stop: () => stream.close() };
}

/** The whole log of a container as it is now, with timestamps. */
export async function readLog(
  cluster: Cluster,
  namespace: string,
  pod: string,
  container: string,
  options?: RetryOptions,
): Promise<string> {
  return withRetry(
    cluster,
    `read the log of ${namespace}/${pod}`,
    () => getText(cluster, logPath(namespace, pod), { container, timestamps: true }),
    options,
  );
}
