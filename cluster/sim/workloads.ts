// apps/v1 Deployments and ReplicaSets: the API server's defaults (pkg/apis/apps/v1/defaults.go) and
// the validation that names a field (pkg/apis/apps/validation), for what the lab's clients send.
import { ApiError } from './status.ts';
import { canonicalJson } from './names.ts';
import type { KubeObject } from './store.ts';

const invalidField = (kind: string, name: string, field: string, message: string) =>
  new ApiError(422, 'Invalid', `${kind}.apps "${name}" is invalid: ${field}: ${message}`, {
    name,
    kind: kind.toLowerCase() + 's',
    causes: [{ reason: 'FieldValueInvalid', message, field }],
  });

const INT_OR_PERCENT = /^(\d+)%$/;

/** intstr.GetScaledValueFromIntOrPercent: an int as is, a percent of `total` rounded up or down. */
export function scaledValue(value: number | string | undefined, total: number, roundUp: boolean): number {
  if (value === undefined) return 0;
  if (typeof value === 'number') return value;
  const m = INT_OR_PERCENT.exec(value);
  if (!m)
    throw new Error(
      `invalid value for IntOrString: invalid value "${value}": must be an integer or percentage (e.g '5%')`,
    );
  const scaled = (Number(m[1]) * total) / 100;
  return roundUp ? Math.ceil(scaled) : Math.floor(scaled);
}

function validateIntOrPercent(kind: string, name: string, field: string, value: unknown): void {
  if (typeof value === 'number') {
    if (!Number.isInteger(value) || value < 0)
      throw invalidField(kind, name, field, `Invalid value: ${value}: must be greater than or equal to 0`);
  } else if (typeof value !== 'string' || !INT_OR_PERCENT.test(value)) {
    throw invalidField(
      kind,
      name,
      field,
      `Invalid value: ${JSON.stringify(value)}: a valid percent string must be a numeric string followed by an ending '%' (e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')`,
    );
  }
}

/** The pod template's defaults as the API server fills them, so templates compare equal after a round trip. */
function defaultPodSpec(spec: any): void {
  spec.restartPolicy ??= 'Always';
  spec.terminationGracePeriodSeconds ??= 30;
  spec.dnsPolicy ??= 'ClusterFirst';
  spec.schedulerName ??= 'default-scheduler';
  spec.securityContext ??= {};
  for (const c of (spec.containers ?? []) as any[]) {
    c.terminationMessagePath ??= '/dev/termination-log';
    c.terminationMessagePolicy ??= 'File';
    c.imagePullPolicy ??=
      typeof c.image === 'string' && (c.image.endsWith(':latest') || !/:[^/]+$/.test(c.image))
        ? 'Always'
        : 'IfNotPresent';
    c.resources ??= {};
    for (const p of (c.ports ?? []) as any[]) p.protocol ??= 'TCP';
  }
}

function validateTemplate(kind: string, name: string, o: KubeObject): void {
  const template = o.spec.template;
  if (!template || typeof template !== 'object') throw invalidField(kind, name, 'spec.template', 'Required value');
  const selector = o.spec.selector;
  if (!selector || typeof selector !== 'object' || (!selector.matchLabels && !selector.matchExpressions))
    throw invalidField(kind, name, 'spec.selector', 'Required value');
  const labels = template.metadata?.labels ?? {};
  if (!selectorMatches(selector, labels)) {
    throw invalidField(
      kind,
      name,
      'spec.template.metadata.labels',
      `Invalid value: ${JSON.stringify(labels)}: \`selector\` does not match template \`labels\``,
    );
  }
  const containers = template.spec?.containers;
  if (!Array.isArray(containers) || containers.length === 0)
    throw invalidField(kind, name, 'spec.template.spec.containers', 'Required value');
  for (const [i, c] of containers.entries()) {
    if (!c?.name) throw invalidField(kind, name, `spec.template.spec.containers[${i}].name`, 'Required value');
    if (!c?.image) throw invalidField(kind, name, `spec.template.spec.containers[${i}].image`, 'Required value');
  }
  defaultPodSpec(template.spec);
  if (template.spec.restartPolicy !== 'Always') {
    throw invalidField(
      kind,
      name,
      'spec.template.spec.restartPolicy',
      `Unsupported value: ${JSON.stringify(template.spec.restartPolicy)}: supported values: "Always"`,
    );
  }
  const replicas = o.spec.replicas;
  if (!Number.isInteger(replicas) || replicas < 0)
    throw invalidField(
      kind,
      name,
      'spec.replicas',
      `Invalid value: ${JSON.stringify(replicas)}: must be greater than or equal to 0`,
    );
}

/** A LabelSelector (matchLabels and matchExpressions) against a label map. */
export function selectorMatches(selector: any, labels: Record<string, string> | undefined): boolean {
  if (!selector) return false;
  const l = labels ?? {};
  for (const [k, v] of Object.entries(selector.matchLabels ?? {})) if (l[k] !== v) return false;
  for (const e of (selector.matchExpressions ?? []) as any[]) {
    const has = e.key in l;
    const values: string[] = e.values ?? [];
    if (e.operator === 'In' && !(has && values.includes(l[e.key]!))) return false;
    if (e.operator === 'NotIn' && has && values.includes(l[e.key]!)) return false;
    if (e.operator === 'Exists' && !has) return false;
    if (e.operator === 'DoesNotExist' && has) return false;
  }
  return true;
}

export function prepareDeployment(d: KubeObject, old?: KubeObject): void {
  const name = d.metadata.name;
  d.spec ??= {};
  d.spec.replicas ??= 1;
  d.spec.revisionHistoryLimit ??= 10;
  d.spec.progressDeadlineSeconds ??= 600;
  d.spec.strategy ??= { type: 'RollingUpdate' };
  d.spec.strategy.type ??= 'RollingUpdate';
  if (d.spec.strategy.type === 'RollingUpdate') {
    const ru = (d.spec.strategy.rollingUpdate ??= {});
    ru.maxUnavailable ??= '25%';
    ru.maxSurge ??= '25%';
    validateIntOrPercent('Deployment', name, 'spec.strategy.rollingUpdate.maxUnavailable', ru.maxUnavailable);
    validateIntOrPercent('Deployment', name, 'spec.strategy.rollingUpdate.maxSurge', ru.maxSurge);
    if (scaledValue(ru.maxUnavailable, 100, false) > 100 && typeof ru.maxUnavailable === 'string') {
      throw invalidField(
        'Deployment',
        name,
        'spec.strategy.rollingUpdate.maxUnavailable',
        `Invalid value: ${JSON.stringify(ru.maxUnavailable)}: must not be greater than 100%`,
      );
    }
    if (scaledValue(ru.maxUnavailable, 100, false) === 0 && scaledValue(ru.maxSurge, 100, true) === 0) {
      throw invalidField(
        'Deployment',
        name,
        'spec.strategy.rollingUpdate.maxUnavailable',
        `Invalid value: ${JSON.stringify(ru.maxUnavailable)}: may not be 0 when \`maxSurge\` is 0`,
      );
    }
  } else if (d.spec.strategy.type === 'Recreate') {
    if (d.spec.strategy.rollingUpdate)
      throw invalidField(
        'Deployment',
        name,
        'spec.strategy.rollingUpdate',
        "Forbidden: may not be specified when strategy `type` is 'Recreate'",
      );
  } else {
    throw invalidField(
      'Deployment',
      name,
      'spec.strategy.type',
      `Unsupported value: ${JSON.stringify(d.spec.strategy.type)}: supported values: "Recreate", "RollingUpdate"`,
    );
  }
  validateTemplate('Deployment', name, d);
  prepareGeneration(d, old, 'Deployment');
}

export function prepareReplicaSet(rs: KubeObject, old?: KubeObject): void {
  rs.spec ??= {};
  rs.spec.replicas ??= 1;
  validateTemplate('ReplicaSet', rs.metadata.name, rs);
  prepareGeneration(rs, old, 'ReplicaSet');
}

/** generation rises with every change of spec; status is the controllers' (the status subresource). */
function prepareGeneration(o: KubeObject, old: KubeObject | undefined, kind: string): void {
  if (!old) {
    o.metadata.generation = 1;
    o.status = {};
    return;
  }
  if (canonicalJson(o.spec.selector) !== canonicalJson(old.spec.selector)) {
    throw invalidField(
      kind,
      o.metadata.name,
      'spec.selector',
      `Invalid value: ${JSON.stringify(o.spec.selector)}: field is immutable`,
    );
  }
  o.status = old.status;
  o.metadata.generation =
    canonicalJson(o.spec) === canonicalJson(old.spec)
      ? old.metadata.generation
      : Number(old.metadata.generation ?? 1) + 1;
}
