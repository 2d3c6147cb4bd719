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
export const LAB_TERM_ALLOCATE_ENV = 'LAB_TERM_ALLOCATE_MIB';
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
  'listening', 'accepted', 'completed', 'aborted', 'rejected',
  'signal', 'draining', 'drained', 'hook-start', 'hook-end', 'exit', 'allocating',
] as const;
export type LabEventName = (typeof LAB_EVENT_NAMES)[number];

/** Event lines of the load generator (server/load.ts, LAB_MODE=load). */
export const LOAD_EVENT_NAMES = ['load-start', 'request', 'load-end'] as const;
export type LoadEventName = (typeof LOAD_EVENT_NAMES)[number];

/** The exec hook program's path inside the image (server/image.ts installs it there). */
export const HOOK_PROGRAM = '/usr/local/bin/lab-hook';
/** `lab-hook sleep <ms>` and `lab-hook fail`: its two commands. */
export const HOOK_COMMANDS = { sleep: 'sleep', fail: 'fail' } as const;
/** The server's httpGet hook endpoint: GET /hook/prestop?ms=<ms> answers after ms. */
export const HOOK_HTTP_PATH = '/hook/prestop';
/** The `kind` field of a hook-start/hook-end line: which handler ran it. */
export const HOOK_LINE_KINDS = ['exec', 'httpGet'] as const;
export type HookLineKind = (typeof HOOK_LINE_KINDS)[number];
