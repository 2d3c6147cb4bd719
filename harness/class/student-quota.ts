// The class's quota spread over its seats: each student namespace gets 1/seats of every limit in
// the class's ConfigMap (manifests/class.yaml), rounded down, so the class never holds more than the whole.
import { TermlabError } from '../../lib/errors.ts';

const BINARY: Record<string, number> = { Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, Ti: 2 ** 40 };
const DECIMAL: Record<string, number> = { k: 1e3, M: 1e6, G: 1e9, T: 1e12 };
const QUANTITY = /^(\d+(?:\.\d+)?)(m|Ki|Mi|Gi|Ti|k|M|G|T)?$/;

/** One quantity divided by `seats`: counts stay whole numbers, CPU goes to millicores, memory to Mi. */
export function shareOf(key: string, quantity: string, seats: number): string {
  const m = QUANTITY.exec(quantity.trim());
  if (!m)
    throw new TermlabError(
      'CLASS_NOT_READY',
      `the class ConfigMap's ${key}: ${JSON.stringify(quantity)} is not a quantity termlab can divide (such as 40, 4, 500m, 4Gi)`,
      { key },
    );
  const number = Number(m[1]);
  const suffix = m[2] ?? '';
  if (key.includes('cpu')) {
    const milli = suffix === 'm' ? number : number * 1000 * (DECIMAL[suffix] ?? 1);
    return `${Math.floor(milli / seats)}m`;
  }
  if (key.includes('memory') || key.includes('storage')) {
    const bytes = suffix === 'm' ? number / 1000 : number * (BINARY[suffix] ?? DECIMAL[suffix] ?? 1);
    return `${Math.floor(bytes / seats / BINARY.Mi!)}Mi`;
  }
  if (suffix)
    throw new TermlabError(
      'CLASS_NOT_READY',
      `the class ConfigMap's ${key}: ${JSON.stringify(quantity)} is a count and takes no unit`,
      { key },
    );
  return String(Math.floor(number / seats));
}

export interface ClassLimits {
  seats: number;
  /** The class's whole quota (ResourceQuota spec.hard keys). */
  hard: Record<string, string>;
}

/** The ConfigMap's data: `seats` and the quota keys. */
export function classLimits(data: Record<string, string> | undefined, where: string): ClassLimits {
  const seatsText = data?.seats;
  if (!seatsText || !/^[1-9]\d*$/.test(seatsText))
    throw new TermlabError(
      'CLASS_NOT_READY',
      `${where}: data.seats must be a whole number of at least 1, got ${JSON.stringify(seatsText ?? null)}`,
      { where },
    );
  const hard: Record<string, string> = Object.create(null);
  for (const [key, value] of Object.entries(data ?? {})) if (key !== 'seats') hard[key] = value;
  return { seats: Number(seatsText), hard };
}

export function studentQuota(limits: ClassLimits): Record<string, string> {
  const share: Record<string, string> = {};
  for (const [key, value] of Object.entries(limits.hard)) share[key] = shareOf(key, value, limits.seats);
  return share;
}
