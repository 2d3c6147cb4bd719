// What crosses the lab pod's boundary, as values: the names and numbers the lab server and its hook
// write and read, and that the harness, the grader and the simulator's runtime rely on. No
// dependencies: the server imports this at run time, so it is one of the image's sources
// (server/image.ts). The zod schemas of the same lines and the hook's render and parse are in
// contract-schemas.ts, which the server imports only as types (erased by Node's type stripping).

/** The server's modes (LAB_MODE or --mode); `load` makes the same program the load generator. */
export const LAB_MODES = ['graceful', 'immediate', 'ignore-term'] as const;
export type LabMode = (typeof LAB_MODES)[number];
/** The environment variable the server reads its mode from; the pod renderer sets it. */
export const LAB_MODE_ENV = 'LAB_MODE';
/** The mode that makes the server the rollout lab's load generator (server/load.ts). */
export const LAB_LOAD_MODE = 'load';
export const LAB_TERM_ALLOCATE_ENV = 'LAB_TERM_ALLOCATE_MIB';
/**
 * The signal the server drains on (LAB_DRAIN_SIGNAL): SIGTERM by default. Any other makes the nginx story of
 * KEP-4960: the server drains only on that signal and, in graceful mode, exits at once (17) on SIGTERM.
 */
export const LAB_DRAIN_SIGNAL_ENV = 'LAB_DRAIN_SIGNAL';
export const LAB_DRAIN_SIGNALS = ['SIGTERM', 'SIGQUIT', 'SIGINT', 'SIGUSR1', 'SIGUSR2'] as const;
export type LabDrainSignal = (typeof LAB_DRAIN_SIGNALS)[number];
/**
 * The app's keep-alive variant at TERM (LAB_KEEPALIVE; unset: today's drain, as naive). naive: Node's
 * server.close(), which closes every idle kept-alive socket at once. polite: idle sockets stay open, every
 * answer after TERM says `Connection: close`, and each socket closes once no request is on it (one never used
 * closes at the keep-alive timeout after TERM).
 */
export const LAB_KEEPALIVE_ENV = 'LAB_KEEPALIVE';
export const LAB_KEEPALIVE_VARIANTS = ['polite', 'naive'] as const;
export type LabKeepAlive = (typeof LAB_KEEPALIVE_VARIANTS)[number];
/** The app's own idle keep-alive timeout, ms (Node's server.keepAliveTimeout; Node's default 5000). */
export const LAB_KEEPALIVE_TIMEOUT_ENV = 'LAB_KEEPALIVE_TIMEOUT_MS';
export const LAB_KEEPALIVE_TIMEOUT_DEFAULT_MS = 5000;
/** How fast the server allocates (and touches) that memory on TERM, MiB a second: paced like a leak. */
export const LAB_TERM_ALLOCATE_MIB_PER_SECOND = 64;

/** The lab server's own exit codes. Kubernetes gives them no meaning; 137/143 are the runtime's. */
export const LAB_EXIT_CODES = {
  /** A bad setting or a port it cannot listen on: the server never started. */
  config: 2,
  /** immediate mode: left at once on TERM, cutting whatever was in flight. */
  immediate: 17,
} as const;

/** Every event line the server (server/events.ts) and the exec hook (server/lab-hook.sh) write. */
export const LAB_EVENT_NAMES = [
  'listening',
  'accepted',
  'completed',
  'aborted',
  'rejected',
  'signal',
  'draining',
  'drained',
  'hook-start',
  'hook-end',
  'exit',
  'allocating',
  'effect',
] as const;
export type LabEventName = (typeof LAB_EVENT_NAMES)[number];

/** Event lines of the load generator (server/load.ts, LAB_MODE=load). */
export const LOAD_EVENT_NAMES = ['load-start', 'request', 'load-end'] as const;
export type LoadEventName = (typeof LOAD_EVENT_NAMES)[number];

/**
 * LAB_MODE=proxy makes the same program a sidecar proxy (server/proxy.ts): it listens on PORT and
 * forwards each request to the app container on localhost, PROXY_UPSTREAM_PORT. It is no LAB_MODES
 * entry: a scenario's `mode` is the app's, and the proxy is the sidecar block's.
 */
export const LAB_PROXY_MODE = 'proxy';
export const PROXY_UPSTREAM_PORT_ENV = 'PROXY_UPSTREAM_PORT';
/** What the proxy does on TERM: `exit` at once (as many proxies do by default) or `drain` its open requests. */
export const PROXY_ON_TERM_ENV = 'PROXY_ON_TERM';
export const PROXY_ON_TERM_MODES = ['exit', 'drain'] as const;
export type ProxyOnTerm = (typeof PROXY_ON_TERM_MODES)[number];
/**
 * The proxy's own endpoints, answered by it and never forwarded: a native sidecar starts before the
 * app, so a startup or readiness probe that went through to the app could never pass.
 */
export const PROXY_OWN_PATHS = { healthz: '/proxy/healthz', readyz: '/proxy/readyz' } as const;
/** The proxy container a scenario's `sidecar:` block adds (harness/scenario/render.ts): its name and port. */
export const PROXY_CONTAINER = { name: 'proxy', port: 8081, portName: 'proxy' } as const;
/** Every proxy line carries `role: "proxy"`, so a proxy's line is never taken for the app's. */
export const PROXY_ROLE = 'proxy';
/**
 * Event lines of the proxy. accepted: a client's request reached it; forwarded: the connection to the
 * app is open and the request is on its way; upstream-done: the app's answer ended (how, in `outcome`).
 * In exit mode the proxy leaves with LAB_EXIT_CODES.immediate, the lab's "left at once".
 */
export const PROXY_EVENT_NAMES = [
  'listening',
  'accepted',
  'forwarded',
  'upstream-done',
  'rejected',
  'signal',
  'draining',
  'drained',
  'exit',
] as const;
export type ProxyEventName = (typeof PROXY_EVENT_NAMES)[number];
/** How one forwarded request ended, as the proxy saw it. */
export const PROXY_OUTCOMES = [
  /** The app's whole answer was passed on to the client. */
  'completed',
  /** The app's answer stopped before its end (the app died or reset): the client's is cut too. */
  'cut',
  /** No answer from the app (refused, reset before the headers): the client gets a 502. */
  'failed',
  /** The client went away first; the request to the app is dropped. */
  'client-gone',
] as const;
export type ProxyOutcome = (typeof PROXY_OUTCOMES)[number];

/** The exec hook program's path inside the image (server/image.ts installs it there). */
export const HOOK_PROGRAM = '/usr/local/bin/lab-hook';
/** `lab-hook sleep <ms>` and `lab-hook fail`: its two commands. */
export const HOOK_COMMANDS = { sleep: 'sleep', fail: 'fail' } as const;
/** The server's httpGet hook endpoint: GET /hook/prestop?ms=<ms> answers after ms. */
export const HOOK_HTTP_PATH = '/hook/prestop';
/** The `kind` field of a hook-start/hook-end line: which handler ran it. */
export const HOOK_LINE_KINDS = ['exec', 'httpGet'] as const;
export type HookLineKind = (typeof HOOK_LINE_KINDS)[number];

/**
 * The retries lab (issue 27). A request's business side effect (charging a card, writing a row) is a
 * call from the app's work to the ledger: the same program in LAB_MODE=ledger, one pod behind a Service.
 * LAB_EFFECT says where in the work the call is made: `start` (right after the accepted line), `end`
 * (after the work, before the done line: the effect is committed before the answer), or `none`.
 */
export const LAB_LEDGER_MODE = 'ledger';
export const LAB_EFFECT_ENV = 'LAB_EFFECT';
export const LAB_EFFECT_POINTS = ['start', 'end', 'none'] as const;
export type EffectPoint = (typeof LAB_EFFECT_POINTS)[number];
/** The ledger's base URL as the app reaches it (the Service's address). */
export const LAB_LEDGER_URL_ENV = 'LAB_LEDGER_URL';
/** The client's idempotency key: the app passes it on to the ledger, which applies a key once. */
export const IDEMPOTENCY_HEADER = 'idempotency-key';
/** The ledger's own endpoints: POST an effect; GET every record kept so far. */
export const LEDGER_PATHS = { effect: '/effect', records: '/records' } as const;
/** Every ledger line carries `role: "ledger"`, so it is never taken for an app's line. */
export const LEDGER_ROLE = 'ledger';
/** How the ledger answered one effect: applied (a new record), or a key it had already applied. */
export const LEDGER_RESULTS = ['applied', 'already-applied'] as const;
export type LedgerResult = (typeof LEDGER_RESULTS)[number];
/** Event lines of the ledger (server/ledger.ts). */
export const LEDGER_EVENT_NAMES = ['listening', 'applied', 'already-applied', 'signal', 'exit'] as const;
export type LedgerEventName = (typeof LEDGER_EVENT_NAMES)[number];

/**
 * LAB_MODE=witness (server/witness.ts, issue 41): the instructor's in-cluster record of every lab pod of a
 * class, one ConfigMap per pod (named WITNESS_RECORD_PREFIX + the pod's UID, labelled WITNESS_RECORD_LABEL=pod,
 * its record as JSON under WITNESS_DATA_KEY). `termlab class witness export` reads them back; the grader
 * matches hand-ins against them. The zod schema of a record is harness/observation/witness.ts.
 */
export const LAB_WITNESS_MODE = 'witness';
export const WITNESS_RECORD_PREFIX = 'pod-';
export const WITNESS_RECORD_LABEL = 'termlab.io/witness';
export const WITNESS_DATA_KEY = 'record.json';
export const WITNESS_RECORD_VERSION = 1;
/** The namespace of a class's witness and its records: instructor-only (manifests/class.yaml). */
export const witnessNamespaceOf = (classNamespace: string): string => `${classNamespace}-witness`;

/** A container's terminated state as the API showed it (times whole seconds, verbatim). */
export interface WitnessContainer {
  name: string;
  init: boolean;
  exitCode: number;
  reason: string | null;
  startedAt: string | null;
  finishedAt: string | null;
}

/** One of the pod's events (Killing, FailedPreStopHook, ...), verbatim. */
export interface WitnessEvent {
  reason: string;
  type: string;
  message: string;
  count: number;
  firstTimestamp: string | null;
  lastTimestamp: string | null;
}

/** What the witness keeps of one pod. */
export interface WitnessRecord {
  version: typeof WITNESS_RECORD_VERSION;
  uid: string;
  namespace: string;
  name: string;
  /** The student whose namespace (CLASS-NAME) the pod is in; null outside any student's namespace. */
  student: string | null;
  /** The pod's termlab.io/owner label (what the harness said), kept beside the namespace's student. */
  ownerLabel: string | null;
  scenario: string | null;
  runId: string | null;
  created: string | null;
  deletionTimestamp: string | null;
  /** metadata.deletionGracePeriodSeconds, as first seen with the deletionTimestamp (both kept from then on). */
  grace: number | null;
  /**
   * The deletion was first seen when the containers had already ended (the witness was down): the kubelet's
   * final delete (grace 0) may have rewritten deletionTimestamp and grace by then.
   */
  lateDeletion: boolean;
  terminationGracePeriodSeconds: number | null;
  containers: WitnessContainer[];
  events: WitnessEvent[];
  /** When the witness saw the pod gone (its clock), and how: a DELETED watch event, or missing from a relist. */
  goneAt: string | null;
  goneSeenBy: 'watch' | 'relist' | null;
  /** The pod's resourceVersion the record was last written from. */
  podResourceVersion: string;
  firstSeenAt: string;
}
