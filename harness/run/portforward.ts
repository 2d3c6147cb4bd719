// Moved to harness/kube/portforward.ts. This form, taking a bare KubeConfig, stays only for the
// simulated cluster's own tests (test/sim/termination.test.ts) until they import from kube/.
import type { KubeConfig } from '@kubernetes/client-node';
import { ApiHealth, openPortForward as openThroughKube, type PortForwardHandle } from '../kube/index.ts';

export type { PortForwardHandle };

export function openPortForward(kc: KubeConfig, namespace: string, pod: string, port: number): Promise<PortForwardHandle> {
  return openThroughKube({ kc, health: new ApiHealth(), context: kc.getCurrentContext(), server: kc.getCurrentCluster()?.server ?? '' }, namespace, pod, port);
}
