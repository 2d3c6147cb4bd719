// Shared bits of the renderers: escaping untrusted strings and naming verdicts.
import type { Verdict } from '../grade/types.ts';

export function escapeXml(value: unknown): string {
  return String(value)
    .replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;').replace(/'/g, '&#39;')
    // XML 1.0 cannot hold most control characters at all, even escaped.
    .replace(/[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]/g, '\uFFFD');
}

export const VERDICT_LABEL: Record<Verdict, string> = {
  'matches-model': '✅ matches the model',
  'differs-from-model': '❌ differs from the model',
  inconclusive: '⚠️ inconclusive',
  'evidence-invalid': '🚫 evidence invalid',
};

export function formatExit(exitCode: number | null, reason: string | null): string {
  return exitCode === null ? '—' : `${exitCode}${reason ? ` (${reason})` : ''}`;
}

export function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(ms % 1000 === 0 ? 0 : 1)}s`;
}
