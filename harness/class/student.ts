// `termlab class student`: one student of a class on one cluster. The student gets a namespace of
// their own (CLASS-NAME) with 1/seats of the class's quota, a ServiceAccount in the class's namespace
// bound to the ClusterRole termlab-student in that namespace only, and a token that expires. The
// cluster's RBAC then keeps each student to their own pods: nothing of theirs reaches another's
// namespace. (A ValidatingAdmissionPolicy cannot do it: on CONNECT to pods/exec and pods/portforward
// it sees only PodExecOptions / PodPortForwardOptions, never the pod or its labels — docs/instructor-guide.md.)
import * as k8s from '@kubernetes/client-node';
import { TermlabError } from '../../lib/errors.ts';
import { classify, listObjects, timeoutOptions, withRetry, type Cluster } from '../kube/index.ts';
import { MANAGED_BY, MANAGER } from '../safety/labels.ts';
import { CLASS_LABEL } from '../safety/reap-class.ts';
import { waitForDefaultAccount } from './default-account.ts';
import { classLimits, studentQuota } from './student-quota.ts';

const STUDENT_LABEL = 'termlab.io/student';
const CLASS_CONFIGMAP = 'termlab-class';
/** ClusterRoles from manifests/class.yaml, bound per student namespace. */
const STUDENT_ROLE = 'termlab-student';
const REAPER_ROLE = 'termlab-reaper';
const REAPER_ACCOUNT = 'termlab-reaper';
const QUOTA_NAME = 'termlab-quota';
export const MAX_TOKEN_HOURS = 168;
export const DEFAULT_TOKEN_HOURS = 24;

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

function studentNamespace(classNamespace: string, name: string): string {
  return `${classNamespace}-${name}`;
}

/** A student's name becomes a ServiceAccount's and a namespace's: lowercase RFC 1123, and short enough for both. */
export function checkStudentName(name: string, classNamespace: string): void {
  if (!DNS_LABEL.test(name))
    throw new TermlabError(
      'USAGE',
      `student name ${JSON.stringify(name)}: lowercase letters, digits and '-', starting and ending with a letter or digit (it names a ServiceAccount and a namespace)`,
      { name },
    );
  // CLASS-witness is the witness's namespace (manifests/class.yaml): no student may have it.
  if (name === 'witness')
    throw new TermlabError(
      'USAGE',
      `student name "witness": ${classNamespace}-witness is the class witness's namespace; choose another name`,
      { name },
    );
  const ns = studentNamespace(classNamespace, name);
  if (ns.length > 63)
    throw new TermlabError(
      'USAGE',
      `student name ${JSON.stringify(name)}: the namespace ${ns} would be ${ns.length} characters, more than 63; use a shorter name`,
      { name },
    );
}

export interface StudentResult {
  namespace: string;
  serviceAccount: string;
  /** What the cluster will say the student is (SelfSubjectReview). */
  username: string;
  quota: Record<string, string>;
  seats: number;
  created: string[];
  kept: string[];
  token: string;
  expiresAt: string;
  expirationSeconds: number;
}

const statusOf = (error: unknown) => classify(error).status;

export async function addStudent(
  cluster: Cluster,
  options: { classNamespace: string; name: string; hours: number; signal?: AbortSignal },
): Promise<StudentResult> {
  const { classNamespace, name, signal } = options;
  checkStudentName(name, classNamespace);
  const limit = () => timeoutOptions(cluster.health.requestTimeoutMs);
  const core = cluster.core;
  const rbac = cluster.kc.makeApiClient(k8s.RbacAuthorizationV1Api);
  const call = <T>(what: string, fn: () => Promise<T>) => withRetry(cluster, what, fn, { signal });

  let config: k8s.V1ConfigMap;
  try {
    config = await call(`read configmap ${classNamespace}/${CLASS_CONFIGMAP}`, () =>
      core.readNamespacedConfigMap({ name: CLASS_CONFIGMAP, namespace: classNamespace }, limit()),
    );
  } catch (error) {
    if (statusOf(error) === 404)
      throw new TermlabError(
        'CLASS_NOT_READY',
        `namespace ${classNamespace} has no ConfigMap ${CLASS_CONFIGMAP}: apply manifests/class.yaml first, or name the class's namespace with --namespace`,
        { namespace: classNamespace },
      );
    throw error;
  }
  const limits = classLimits(config.data, `ConfigMap ${classNamespace}/${CLASS_CONFIGMAP}`);
  const namespace = studentNamespace(classNamespace, name);
  const classSelector = `${CLASS_LABEL}=${classNamespace},${STUDENT_LABEL}`;
  const seated = (await listObjects(cluster, '/api/v1/namespaces', classSelector, { signal })).map((n) => n.name);
  if (!seated.includes(namespace) && seated.length >= limits.seats) {
    throw new TermlabError(
      'CLASS_NOT_READY',
      `the class ${classNamespace} has ${limits.seats} seat(s), all taken (${seated.sort().join(', ')}): raise data.seats in ConfigMap ${classNamespace}/${CLASS_CONFIGMAP} (new students then get the smaller share), or remove a student's namespace`,
      { seats: limits.seats },
    );
  }
  const labels = { [MANAGED_BY]: MANAGER, [CLASS_LABEL]: classNamespace, [STUDENT_LABEL]: name };
  const created: string[] = [];
  const kept: string[] = [];
  /** Creates the object; one already there (a second `class student` for the same name) is kept as it is. */
  const ensure = async (what: string, create: () => Promise<unknown>) => {
    try {
      await call(`create ${what}`, create);
      created.push(what);
    } catch (error) {
      if (statusOf(error) !== 409) throw error;
      kept.push(what);
    }
  };

  await ensure(`namespace ${namespace}`, () =>
    core.createNamespace({ body: { metadata: { name: namespace, labels } } }, limit()),
  );
  if (kept.includes(`namespace ${namespace}`)) {
    const existing = await call(`read namespace ${namespace}`, () => core.readNamespace({ name: namespace }, limit()));
    const l = existing.metadata?.labels ?? {};
    if (l[CLASS_LABEL] !== classNamespace || l[STUDENT_LABEL] !== name)
      throw new TermlabError(
        'CLASS_NOT_READY',
        `namespace ${namespace} exists and is not class ${classNamespace}'s namespace of student ${name} (its labels ${CLASS_LABEL}, ${STUDENT_LABEL} say otherwise): termlab leaves it alone; choose another name`,
        { namespace },
      );
  }
  const quota = studentQuota(limits);
  await ensure(`resourcequota ${namespace}/${QUOTA_NAME}`, () =>
    core.createNamespacedResourceQuota(
      { namespace, body: { metadata: { name: QUOTA_NAME, labels }, spec: { hard: quota } } },
      limit(),
    ),
  );
  // As manifests/namespace.yaml: defaults for a container that does not say, so the quota can always be checked.
  await ensure(`limitrange ${namespace}/termlab-limits`, () =>
    core.createNamespacedLimitRange(
      {
        namespace,
        body: {
          metadata: { name: 'termlab-limits', labels },
          spec: {
            limits: [
              {
                type: 'Container',
                _default: { memory: '256Mi' },
                defaultRequest: { cpu: '50m', memory: '64Mi' },
                max: { memory: '512Mi' },
              },
            ],
          },
        },
      },
      limit(),
    ),
  );
  await ensure(`serviceaccount ${classNamespace}/${name}`, () =>
    core.createNamespacedServiceAccount(
      { namespace: classNamespace, body: { metadata: { name, labels }, automountServiceAccountToken: false } },
      limit(),
    ),
  );
  const binding = (bindingName: string, role: string, account: string) => ({
    metadata: { name: bindingName, labels },
    subjects: [{ kind: 'ServiceAccount', name: account, namespace: classNamespace }],
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: role },
  });
  await ensure(`rolebinding ${namespace}/${STUDENT_ROLE}`, () =>
    rbac.createNamespacedRoleBinding({ namespace, body: binding(STUDENT_ROLE, STUDENT_ROLE, name) }, limit()),
  );
  // The class-wide reaper may take expired pods here too, and nothing else.
  await ensure(`rolebinding ${namespace}/${REAPER_ROLE}`, () =>
    rbac.createNamespacedRoleBinding({ namespace, body: binding(REAPER_ROLE, REAPER_ROLE, REAPER_ACCOUNT) }, limit()),
  );

  // The kubeconfig is handed out only once the namespace takes pods: a student's first run would be refused.
  await waitForDefaultAccount(cluster, namespace, signal);

  const expirationSeconds = Math.round(options.hours * 3600);
  const review = await call(`create token for serviceaccount ${classNamespace}/${name}`, () =>
    core.createNamespacedServiceAccountToken(
      { name, namespace: classNamespace, body: { spec: { expirationSeconds, audiences: [] } } },
      limit(),
    ),
  );
  const token = review.status?.token;
  if (!token)
    throw new TermlabError('API_REJECTED', `the TokenRequest for ${classNamespace}/${name} came back without a token`, {
      namespace: classNamespace,
    });
  const expiresAt = review.status?.expirationTimestamp
    ? new Date(review.status.expirationTimestamp as unknown as string).toISOString()
    : new Date(Date.now() + expirationSeconds * 1000).toISOString();
  return {
    namespace,
    serviceAccount: `${classNamespace}/${name}`,
    username: `system:serviceaccount:${classNamespace}:${name}`,
    quota,
    seats: limits.seats,
    created,
    kept,
    token,
    expiresAt,
    expirationSeconds: review.spec?.expirationSeconds ?? expirationSeconds,
  };
}
