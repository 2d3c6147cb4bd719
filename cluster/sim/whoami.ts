// POST /apis/authentication.k8s.io/v1/selfsubjectreviews: who the caller is, answered as a real
// API server answers it (seen on the node, v1.37: 201, creationTimestamp set, status.userInfo).
// The simulated cluster has one credential, its kubeconfig's token; that token's holder is one user.
import { apiTime } from './time.ts';

/** The one user the simulated cluster knows: whoever holds its token. */
const SIM_USER = {
  username: 'termlab-sim:owner',
  uid: 'termlab-sim-owner',
  groups: ['system:masters', 'system:authenticated'],
} as const;

export function selfSubjectReview(): Record<string, unknown> {
  return {
    kind: 'SelfSubjectReview',
    apiVersion: 'authentication.k8s.io/v1',
    metadata: { creationTimestamp: apiTime() },
    status: { userInfo: { username: SIM_USER.username, uid: SIM_USER.uid, groups: [...SIM_USER.groups] } },
  };
}
