// Label and field selectors, the subset kubectl and client-node send.
import { badRequest } from './status.ts';

type Labels = Record<string, string> | undefined;
type Requirement = (labels: Labels) => boolean;

export function parseLabelSelector(selector: string | null): Requirement {
  if (!selector) return () => true;
  const requirements: Requirement[] = [];
  // Split on commas outside parentheses: "a in (x,y),b=c".
  for (const part of selector
    .split(/,(?![^(]*\))/)
    .map((p) => p.trim())
    .filter(Boolean)) {
    let m: RegExpExecArray | null;
    if ((m = /^([\w./-]+)\s*(=|==|!=)\s*([\w.-]*)$/.exec(part))) {
      const [, key, op, value] = m as unknown as [string, string, string, string];
      requirements.push(op === '!=' ? (l) => l?.[key] !== value : (l) => l?.[key] === value);
    } else if ((m = /^([\w./-]+)\s+(in|notin)\s+\(([^)]*)\)$/.exec(part))) {
      const [, key, op, list] = m as unknown as [string, string, string, string];
      const values = new Set(list.split(',').map((v) => v.trim()));
      requirements.push(op === 'in' ? (l) => values.has(l?.[key] ?? '\0') : (l) => !values.has(l?.[key] ?? '\0'));
    } else if ((m = /^(!?)([\w./-]+)$/.exec(part))) {
      const [, not, key] = m as unknown as [string, string, string];
      requirements.push(not ? (l) => !(l && key in l) : (l) => Boolean(l && key in l));
    } else {
      throw badRequest(`unable to parse requirement: ${JSON.stringify(part)}`);
    }
  }
  return (labels) => requirements.every((r) => r(labels));
}

const FIELDS: Record<string, (o: any) => unknown> = {
  'metadata.name': (o) => o.metadata?.name,
  'metadata.namespace': (o) => o.metadata?.namespace,
  'spec.nodeName': (o) => o.spec?.nodeName ?? '',
  'status.phase': (o) => o.status?.phase ?? '',
  'involvedObject.name': (o) => o.involvedObject?.name,
  'involvedObject.uid': (o) => o.involvedObject?.uid,
  'involvedObject.kind': (o) => o.involvedObject?.kind,
};

export function parseFieldSelector(selector: string | null): (object: unknown) => boolean {
  if (!selector) return () => true;
  const tests = selector
    .split(',')
    .map((p) => p.trim())
    .filter(Boolean)
    .map((part) => {
      const m = /^([\w.]+)\s*(=|==|!=)\s*(.*)$/.exec(part);
      if (!m || !FIELDS[m[1]!]) throw badRequest(`field label not supported: ${part}`);
      const get = FIELDS[m[1]!]!;
      const value = m[3]!;
      return m[2] === '!=' ? (o: unknown) => String(get(o)) !== value : (o: unknown) => String(get(o)) === value;
    });
  return (o) => tests.every((t) => t(o));
}
