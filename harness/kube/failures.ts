// What went wrong with an API call, in one place: transient (worth trying again within the
// outage budget) or final, with a short text for records and messages.
import * as k8s from '@kubernetes/client-node';
import { TermlabError } from '../../lib/errors.ts';

/** An HTTP answer other than 2xx from a request made by kube/http.ts. */
export class HttpStatusError extends Error {
  readonly status: number;
  readonly body: string;
  readonly retryAfterSeconds: number | null;
  constructor(status: number, body: string, retryAfterSeconds: number | null = null) {
    super(`HTTP ${status}: ${body.slice(0, 200)}`);
    this.name = 'HttpStatusError';
    this.status = status;
    this.body = body;
    this.retryAfterSeconds = retryAfterSeconds;
  }
}

/** Our own per-request time limit ran out: the API accepted the connection but did not answer. */
export class RequestTimeoutError extends Error {
  constructor(what: string, ms: number) {
    super(`${what}: no answer within ${ms / 1000}s`);
    this.name = 'RequestTimeoutError';
  }
}

/** Statuses a client retries (client-go: 429 and the server-side 5xx that say "try again"). */
const TRANSIENT_STATUS = new Set([429, 500, 502, 503, 504]);
/** Socket errors of a restarting or overloaded API server. */
const TRANSIENT_NETWORK = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTCONN',
  'EAI_AGAIN',
  'UND_ERR_SOCKET',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_CLOSED',
  'ERR_STREAM_PREMATURE_CLOSE',
]);

export interface Failure {
  transient: boolean;
  /** The HTTP status when the API answered, else null. */
  status: number | null;
  text: string;
  retryAfterSeconds: number | null;
}

function statusBody(body: unknown): string {
  if (typeof body === 'string') {
    try {
      return statusBody(JSON.parse(body));
    } catch {
      return body.slice(0, 200);
    }
  }
  const message = (body as { message?: unknown } | null)?.message;
  return typeof message === 'string' ? message.slice(0, 200) : JSON.stringify(body ?? '').slice(0, 200);
}

function networkCode(error: unknown): string | null {
  const e = error as { code?: unknown; cause?: { code?: unknown } } | null;
  const code = e?.code ?? e?.cause?.code;
  return typeof code === 'string' ? code : null;
}

/** ws reports a WebSocket that failed to open (client-node's port-forward and exec) as an ErrorEvent: the Error is inside it. */
function unwrapErrorEvent(error: unknown): unknown {
  const inner = (error as { error?: unknown } | null)?.error;
  return !(error instanceof Error) && inner instanceof Error ? inner : error;
}

export function classify(given: unknown): Failure {
  const error = unwrapErrorEvent(given);
  if (error instanceof TermlabError)
    return {
      transient: false,
      status: (error.context.status as number | undefined) ?? null,
      text: error.message,
      retryAfterSeconds: null,
    };
  if (error instanceof k8s.ApiException) {
    const retryAfter = Number(error.headers?.['retry-after']);
    return {
      transient: TRANSIENT_STATUS.has(error.code),
      status: error.code,
      text: `HTTP ${error.code}: ${statusBody(error.body)}`,
      retryAfterSeconds: Number.isFinite(retryAfter) ? retryAfter : null,
    };
  }
  if (error instanceof HttpStatusError)
    return {
      transient: TRANSIENT_STATUS.has(error.status),
      status: error.status,
      text: `HTTP ${error.status}: ${statusBody(error.body)}`,
      retryAfterSeconds: error.retryAfterSeconds,
    };
  if (error instanceof RequestTimeoutError)
    return { transient: true, status: null, text: error.message, retryAfterSeconds: null };
  const code = networkCode(error);
  const message = error instanceof Error ? error.message : String(error);
  // ws's words for an upgrade the API server answered with a status instead of 101.
  const upgradeStatus = /^Unexpected server response: (\d{3})$/.exec(message);
  if (upgradeStatus) {
    const status = Number(upgradeStatus[1]);
    return {
      transient: TRANSIENT_STATUS.has(status),
      status,
      text: `HTTP ${status} to the stream's upgrade`,
      retryAfterSeconds: null,
    };
  }
  // node-fetch reports our own timeout signal as an AbortError.
  if ((error as Error | null)?.name === 'AbortError')
    return { transient: true, status: null, text: 'the request timed out', retryAfterSeconds: null };
  if (code && TRANSIENT_NETWORK.has(code))
    return { transient: true, status: null, text: code, retryAfterSeconds: null };
  // A socket that closed mid-answer without a code ("socket hang up", "premature close").
  if (/socket hang up|premature close|other side closed/i.test(message))
    return { transient: true, status: null, text: message, retryAfterSeconds: null };
  return { transient: false, status: null, text: [message, code].filter(Boolean).join(' '), retryAfterSeconds: null };
}

/**
 * An error that escaped every call site, judged at the CLI: an API failure (exit 3) only when it
 * plainly came from the API: an answer (a status), or a socket error of one. An AbortError is an
 * abort signal firing (ours, or Ctrl-C), and EPIPE a write to a pipe its reader closed (stdout,
 * a port-forward's stream): neither says the cluster failed, so neither is reported as if it had.
 */
export function escapedApiFailure(error: unknown): Failure | null {
  if ((error as Error | null)?.name === 'AbortError' || networkCode(error) === 'EPIPE') return null;
  const failure = classify(error);
  return failure.transient || failure.status !== null ? failure : null;
}

/** The text a record or message shows for any failure of an API call. */
export function apiErrorText(error: unknown): string {
  return classify(error).text;
}

export function isNotFound(error: unknown): boolean {
  return classify(error).status === 404;
}
