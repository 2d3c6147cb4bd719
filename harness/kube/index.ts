// The one door to a cluster: client objects, calls, watches, logs and port-forward, with retry and
// backoff living once, here. run/, safety/ and the commands import from this file only.
export { connect, timeoutOptions, type Cluster, type ConnectOptions } from './connect.ts';
export { apiErrorText, classify, escapedApiFailure, isNotFound, type Failure } from './failures.ts';
export { createRoute, deleteRoute, readGateway, readService, type RouteKind } from './edge-routes.ts';
export { followLog, readLog, type LogStreamCallbacks } from './logs.ts';
export { createPod, deletePod, listEvents, listPods, nodeInfo, readPod, removeFinalizer } from './pods.ts';
export { openPortForward, type PortForwardHandle } from './portforward.ts';
export {
  ApiHealth,
  Backoff,
  DEFAULT_API_PATIENCE_MS,
  DEFAULT_REQUEST_TIMEOUT_MS,
  withRetry,
  type OutageReport,
  type RetryOptions,
} from './retry.ts';
export { PodWatchStream, type PodEventType, type PodWatchCallbacks, type WatchLife } from './watch.ts';
export type { V1Pod } from '@kubernetes/client-node';
export { WatchStream, type WatchCallbacks, type WatchTarget } from './watch.ts';
export {
  collectionVersion,
  COLLECTIONS,
  createDeployment,
  createService,
  deleteDeployment,
  deleteService,
  listEndpointSlices,
  listObjects,
  replaceDeploymentTemplate,
  SERVICES,
  type SliceEndpoint,
} from './workloads.ts';
export { selfSubjectReview } from './whoami.ts';
