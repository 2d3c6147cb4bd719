// A SelfSubjectReview (authentication.k8s.io/v1, GA since 1.28): who the API server says the caller is.
import * as k8s from '@kubernetes/client-node';
import { timeoutOptions, type Cluster } from './connect.ts';
import { withRetry, type RetryOptions } from './retry.ts';

export async function selfSubjectReview(cluster: Cluster, options?: RetryOptions): Promise<k8s.V1SelfSubjectReview> {
  const api = cluster.kc.makeApiClient(k8s.AuthenticationV1Api);
  const body = { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' };
  return withRetry(
    cluster,
    'create selfsubjectreview',
    () => api.createSelfSubjectReview({ body }, timeoutOptions(cluster.health.requestTimeoutMs)),
    options,
  );
}
