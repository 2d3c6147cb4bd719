// A harness Cluster for a test's own stand-in API server (a real HTTP server on 127.0.0.1 answering as the API would).
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import * as k8s from '@kubernetes/client-node';
import { ApiHealth, type Cluster } from '../../harness/kube/index.ts';

/** A KubeConfig whose one context points at the listening server, with a bearer token. */
export function standInKubeConfig(server: Server): k8s.KubeConfig {
  const kc = new k8s.KubeConfig();
  kc.loadFromOptions({
    clusters: [
      { name: 'c', server: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, skipTLSVerify: true },
    ],
    users: [{ name: 'u', token: 't' }],
    contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
    currentContext: 'x',
  });
  return kc;
}

export function standInCluster(server: Server): Cluster {
  const kc = standInKubeConfig(server);
  return {
    kc,
    core: kc.makeApiClient(k8s.CoreV1Api),
    context: 'x',
    server: kc.getCurrentCluster()!.server,
    serverVersion: null,
    contextNamespace: null,
    health: new ApiHealth(),
  };
}
