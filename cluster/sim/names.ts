// Generated names as the API server makes them (apiserver/pkg/storage/names: SimpleNameGenerator,
// five characters from k8s.io/apimachinery/pkg/util/rand's alphabet, which has no vowels).
import { randomInt } from 'node:crypto';

const ALPHANUMS = 'bcdfghjklmnpqrstvwxz2456789';
const RANDOM_LENGTH = 5;
const MAX_NAME_LENGTH = 63;
const MAX_GENERATED_BASE = MAX_NAME_LENGTH - RANDOM_LENGTH;

function randomSuffix(length = RANDOM_LENGTH): string {
  let out = '';
  for (let i = 0; i < length; i++) out += ALPHANUMS[randomInt(ALPHANUMS.length)];
  return out;
}

export function generateName(base: string): string {
  return `${base.length > MAX_GENERATED_BASE ? base.slice(0, MAX_GENERATED_BASE) : base}${randomSuffix()}`;
}

/** fnv-1a 32-bit, the hash controller.ComputeHash feeds the pod template into. */
export function fnv32a(text: string): number {
  let hash = 0x811c9dc5;
  for (const byte of Buffer.from(text, 'utf8')) {
    hash ^= byte;
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash;
}

/** rand.SafeEncodeString: the hash's decimal digits mapped onto the vowel-free alphabet. */
export function safeEncodeString(text: string): string {
  return [...text].map((c) => ALPHANUMS[c.charCodeAt(0) % ALPHANUMS.length]).join('');
}

/** A JSON text with sorted keys: the same object always hashes the same. */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  const entries = Object.entries(value as Record<string, unknown>)
    .filter(([, v]) => v !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
}
