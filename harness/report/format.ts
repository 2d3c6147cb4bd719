// Shared bits of the renderers: escaping untrusted strings and naming verdicts.
import { escapeTerminal } from '../../lib/terminal.ts';
import type { GradeResult, Verdict } from '../grade/types.ts';

export function escapeXml(value: unknown): string {
  return (
    String(value)
      .replace(/&/g, '&amp;')
      .replace(/</g, '&lt;')
      .replace(/>/g, '&gt;')
      .replace(/"/g, '&quot;')
      .replace(/'/g, '&#39;')
      // XML 1.0 cannot hold most control characters at all, even escaped.
      .replace(/[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]/g, '\uFFFD')
  );
}

export const VERDICT_LABEL: Record<Verdict, string> = {
  'matches-model': '✅ matches the model',
  'differs-from-model': '❌ differs from the model',
  inconclusive: '⚠️ inconclusive',
  'evidence-invalid': '🚫 evidence invalid',
};

/** A scenario as a report names it: "short-grace (try 2)" for a try after the first. */
export const tryName = (r: { scenario: string; attempt?: number }) =>
  (r.attempt ?? 1) > 1 ? `${r.scenario} (try ${r.attempt})` : r.scenario;
/** Said instead of a verdict for a try that ran again (its request lost, its design not tested): it is no verdict. */
export const supersededLabel = (r: GradeResult) =>
  r.retryCause ? `↻ ${r.retryCause.label}, tried again` : '↻ tried again';
/** What a report says of a try that ran again: why (a lost path in full), and which file counts instead. */
export const supersededText = (r: GradeResult) =>
  `${r.lostPath ?? r.retryCause?.reason ?? r.explanation}; the next try counts instead (${r.supersededBy})`;

export function formatExit(exitCode: number | null, reason: string | null): string {
  return exitCode === null ? '—' : `${exitCode}${reason ? ` (${reason})` : ''}`;
}

/** The exit column: the pod's one code, or each container's by name, the app first ("lab 0 (Completed) · proxy 17 (Error)"). */
export function formatExits(r: {
  exitCode: number | null;
  reason: string | null;
  containers?: { name: string; exitCode: number | null; reason: string | null }[];
}): string {
  return r.containers?.length
    ? r.containers.map((c) => `${c.name} ${formatExit(c.exitCode, c.reason)}`).join(' · ')
    : formatExit(r.exitCode, r.reason);
}

const secs = (n: number) => String(Number(Math.max(0, n).toFixed(1)));

/**
 * One plain line under a chart: what the grace did, in the kubelet's own counting (the hook's whole seconds
 * come out of the grace, at least 2 s are left for TERM), and what that meant for the request. The budget is
 * the model's, the outcome the run's; null for a grade with no timeline or no model.
 */
export function graceCaption(r: GradeResult): string | null {
  const p = r.prediction;
  if (!p || !r.timeline.length) return null;
  const grace = p.graceSeconds;
  const hook = p.hookEndsAt === null ? null : p.termAt - p.kubeletBeganAt;
  const left = hook === null ? grace : Math.max(0, grace - Math.floor(hook + 1e-6));
  const raised = p.killAt - p.termAt > left + 1e-6;
  const budget =
    hook === null
      ? `No hook; SIGTERM came with all ${grace} s left`
      : `${
          hook >= grace - 1e-6
            ? `The hook outlasted the ${grace} s: the kubelet stopped waiting at the grace's end`
            : `The hook used ${Math.floor(hook + 1e-6)} of the ${grace} s`
        }; SIGTERM came with ${left} s left${raised ? `, raised to ${secs(p.killAt - p.termAt)} s` : ''}`;
  const need = secs(p.workEndsAt - p.termAt);
  // Cut at TERM by whoever exited then: the app, or in a pod with a sidecar the container that did (its lane names it).
  const quitter =
    r.kind === 'pod' ? r.containers?.slice(1).find((c) => c.exitCode !== 0 && c.exitCode !== 137) : undefined;
  const who =
    r.exitCode === 0 && quitter
      ? `the ${r.timeline.find((b) => b.lane?.startsWith(`${quitter.name} (`))?.lane ?? quitter.name}`
      : 'the app';
  const request =
    r.outcome === 'cut'
      ? r.exitCode === 137
        ? `the request needed ${need} s more: cut at SIGKILL`
        : `the request needed ${need} s more, but ${who} exited at SIGTERM: cut`
      : r.outcome === 'completed'
        ? `the request needed ${need} s more: completed`
        : `the request: ${r.outcome}`;
  return `${budget}; ${request}.`;
}

export function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(ms % 1000 === 0 ? 0 : 1)}s`;
}

/** A student's prediction as a report shows it beside the verdict; null when the run had no predictions. */
export interface PredictionShown {
  right: boolean | null;
  text: string;
}

/** A prediction as predictions.ts tells it: "cut/137", with a retry scenario's ", 2 attempts, 2 effects" when given. */
const TOLD = String.raw`[a-z]+\/\d+(?:, \d+ attempts?)?(?:, \d+ effects?)?`;

export function predictionShown(r: {
  checks: { id: string; status: string; reason: string }[];
}): PredictionShown | null {
  const vsModel = r.checks.find((c) => c.id === 'prediction.vs-model');
  if (vsModel) {
    const said = vsModel.reason.match(new RegExp(`predicted (${TOLD})|prediction (${TOLD})`));
    const what = said?.[1] ?? said?.[2] ?? '';
    // The reasons are predictions.ts's own sentences: "your prediction X agrees…", "you predicted X, the kubelet model says Y: …".
    const model = vsModel.reason.match(new RegExp(`the kubelet model says (${TOLD})`))?.[1];
    return vsModel.status === 'pass'
      ? { right: true, text: `✓ ${what}` }
      : { right: false, text: `✗ ${what}${model ? ` — the model says ${model}` : ''}` };
  }
  const missing = r.checks.find((c) => c.id === 'prediction.present');
  return missing ? { right: null, text: 'no prediction' } : null;
}

/** A result's prediction checks as the terminal shows them ("prediction ✓ …", "prediction fail: …"), escaped. */
export function predictionLines(r: { checks: { id: string; status: string; reason: string }[] }): string[] {
  return r.checks
    .filter((c) => c.id.startsWith('prediction.'))
    .map((c) => `${c.status === 'pass' ? 'prediction ✓' : `prediction ${c.status}:`} ${escapeTerminal(c.reason)}`);
}

/** "predictions: 6 of 8 right", or null when nothing was predicted. */
export function predictionsCount(
  results: { checks: { id: string; status: string; reason: string }[] }[],
): string | null {
  const shown = results.map(predictionShown).filter((p): p is PredictionShown => p !== null);
  return shown.length ? `predictions: ${shown.filter((p) => p.right).length} of ${shown.length} right` : null;
}
