// The pod boundary as zod schemas: one per event line the lab server, its exec hook and the load
// generator write, and the preStop hook in both directions (a scenario's hook rendered into a pod,
// a live pod's hook parsed back). The writer (server/events.ts) takes its field types from these
// schemas with `import type` only, so the server image still needs no npm package; the runner, the
// grader and the renderers import them as values. Names and numbers: ./contract.ts.
import { z } from 'zod';
import { issueText } from '../lib/issues.ts';
import {
  HOOK_COMMANDS,
  HOOK_HTTP_PATH,
  HOOK_LINE_KINDS,
  HOOK_PROGRAM,
  LAB_DRAIN_SIGNAL_ENV,
  LAB_EFFECT_ENV,
  LAB_EVENT_NAMES,
  LAB_KEEPALIVE_VARIANTS,
  LAB_LEDGER_URL_ENV,
  LAB_MODE_ENV,
  LAB_TERM_ALLOCATE_ENV,
  type EffectPoint,
  type LabDrainSignal,
  type LabEventName,
  type LabMode,
  LEDGER_EVENT_NAMES,
  LEDGER_RESULTS,
  LEDGER_ROLE,
  type LedgerEventName,
  PROXY_EVENT_NAMES,
  PROXY_ON_TERM_MODES,
  PROXY_OUTCOMES,
  PROXY_ROLE,
  type ProxyEventName,
} from './contract.ts';

// --- event lines -----------------------------------------------------------------------------

/** Every line: the event's name, the writer's wall and monotonic clocks, and who wrote it. */
const common = {
  time: z.string(),
  mono: z.number(),
  pid: z.number().optional(),
  podUid: z.string().nullable().optional(),
  podName: z.string().optional(),
};
/** The fields every writer stamps itself (server/events.ts clockNow and identity). */
export type StampedField = keyof typeof common | 'event';

const hookKind = z.enum(HOOK_LINE_KINDS);

export const LAB_LINE_SCHEMAS = {
  listening: z.object({
    ...common,
    mode: z.string().optional(),
    host: z.string().optional(),
    port: z.number().optional(),
    /** LAB_DRAIN_SIGNAL: the signal it drains on (absent before it existed: SIGTERM). */
    drainSignal: z.string().optional(),
    /** LAB_KEEPALIVE and LAB_KEEPALIVE_TIMEOUT_MS, written only when one is set. */
    keepAlive: z.enum(LAB_KEEPALIVE_VARIANTS).nullable().optional(),
    keepAliveTimeoutMs: z.number().optional(),
  }),
  /** method and bodyBytes: only for a POST /work (the load's LOAD_METHOD=POST). */
  accepted: z.object({
    ...common,
    id: z.string(),
    ms: z.number(),
    method: z.literal('POST').optional(),
    bodyBytes: z.int().min(0).optional(),
  }),
  completed: z.object({ ...common, id: z.string(), ms: z.number(), bytes: z.number() }),
  aborted: z.object({ ...common, id: z.string(), elapsedMs: z.number().optional() }),
  rejected: z.object({ ...common, id: z.string(), reason: z.string().optional() }),
  signal: z.object({ ...common, signal: z.string(), repeated: z.boolean().optional() }),
  draining: z.object({ ...common, active: z.number().optional() }),
  drained: z.object({ ...common, completed: z.number().optional(), rejected: z.number().optional() }),
  // `lab-hook sleep <ms>` and the httpGet endpoint log the ms they were asked for; `lab-hook fail`
  // logs `fail: true` and no ms. procAgeMs: the exec hook's own age at its first line (lab-hook.sh).
  'hook-start': z
    .object({
      ...common,
      kind: hookKind,
      ms: z.number().optional(),
      fail: z.literal(true).optional(),
      procAgeMs: z.number().optional(),
    })
    .refine((l) => (l.ms === undefined) !== (l.fail === undefined), {
      message:
        'a hook-start line has ms (a hook that runs) or fail: true (one that fails at once), not both or neither',
      path: ['ms'],
    }),
  'hook-end': z.object({ ...common, kind: hookKind, ms: z.number() }),
  exit: z.object({ ...common, code: z.number() }),
  allocating: z.object({ ...common, mib: z.number(), mibPerSecond: z.number().optional() }),
  // The work's side effect as the app saw the ledger's answer (issue 27): seq is the ledger's record
  // number (of the first application when the key was already applied); failed: no answer came.
  effect: z.object({
    ...common,
    id: z.string(),
    key: z.string().nullable(),
    point: z.enum(['start', 'end']),
    result: z.enum([...LEDGER_RESULTS, 'failed']),
    seq: z.int().min(1).nullable(),
    error: z.string().optional(),
  }),
} as const satisfies Record<LabEventName, z.ZodType>;

export type LabLineOf<E extends LabEventName> = z.infer<(typeof LAB_LINE_SCHEMAS)[E]> & { event: E };
/** What a caller of the server's writer passes: a line's own fields, without the stamped ones. */
export type LabLineFields<E extends LabEventName> = Omit<z.input<(typeof LAB_LINE_SCHEMAS)[E]>, StampedField>;

export const isLabEventName = (name: string): name is LabEventName =>
  (LAB_EVENT_NAMES as readonly string[]).includes(name);

/** One log line read through the contract. */
export type ParsedLabLine =
  | { kind: 'event'; event: LabEventName; line: LabLineOf<LabEventName> }
  /** The JSON names a lab event but its fields are not the ones the server writes. */
  | { kind: 'malformed'; event: string; problem: string }
  /** JSON with an event name and a clock, but not one the lab writes (kept, untyped). */
  | { kind: 'other'; event: string; line: { event: string; time: string; mono: number } & Record<string, unknown> }
  /** Not a lab line at all (plain text, JSON without an event or a clock). */
  | { kind: 'none' };

/** A line with another event name must still carry the stamped fields with their types. */
const OTHER_LINE = z.looseObject({ event: z.string(), ...common });

const problemOf = (error: z.ZodError): string => `field ${issueText(error.issues[0]!, '(line)')}`;

/** A parsed JSON value (see parseLogLineJson for reading the text safely) through the contract. */
export function parseLabLine(json: unknown): ParsedLabLine {
  return parseThrough(LAB_LINE_SCHEMAS, isLabEventName, json) as ParsedLabLine;
}

/** One line through the schema table of its writer: the app's (LAB_LINE_SCHEMAS) or the proxy's. */
function parseThrough(schemas: Record<string, z.ZodType>, known: (name: string) => boolean, json: unknown) {
  if (!json || typeof json !== 'object' || Array.isArray(json)) return { kind: 'none' } as const;
  const event = (json as { event?: unknown }).event;
  if (typeof event !== 'string') return { kind: 'none' } as const;
  if (!known(event)) {
    const other = OTHER_LINE.safeParse(json);
    if (other.success) return { kind: 'other', event, line: other.data } as const;
    // Without the clock it is not a line the lab wrote (every writer stamps one) but someone else's JSON.
    if (other.error.issues.some((i) => i.path[0] === 'time' || i.path[0] === 'mono')) return { kind: 'none' } as const;
    return { kind: 'malformed', event, problem: problemOf(other.error) } as const;
  }
  const result = schemas[event]!.safeParse(json);
  if (!result.success) return { kind: 'malformed', event, problem: problemOf(result.error) } as const;
  return { kind: 'event', event, line: { ...(result.data as object), event } } as const;
}

// --- a writer beside the app: each line stamped with its role, read through its own schema table ---

/** Its lines' common fields: the common stamp and its `role`, which no app line has. */
const roleCommon = <R extends string>(role: R) => ({ ...common, role: z.literal(role) });
type RoleLineOf<S extends Record<string, z.ZodType>, E extends keyof S> = z.infer<S[E]> & { event: E };
type RoleLineFields<S extends Record<string, z.ZodType>, E extends keyof S> = Omit<
  z.input<S[E]>,
  StampedField | 'role'
>;
type ParsedRoleLine<S extends Record<string, z.ZodType>, N extends keyof S & string> =
  | { kind: 'event'; event: N; line: RoleLineOf<S, N> }
  | Exclude<ParsedLabLine, { kind: 'event' }>;

/** The name test and the parser of one such writer's lines. */
function roleLines<N extends string, S extends Record<N, z.ZodType>>(names: readonly N[], schemas: S) {
  const isEventName = (name: string): name is N => (names as readonly string[]).includes(name);
  const parse = (json: unknown): ParsedRoleLine<S, N> =>
    parseThrough(schemas, isEventName, json) as ParsedRoleLine<S, N>;
  return { isEventName, parse };
}

// --- the proxy's lines (server/proxy.ts, LAB_MODE=proxy) --------------------------------------

const proxyCommon = roleCommon(PROXY_ROLE);
const requestId = z.string().min(1);

export const PROXY_LINE_SCHEMAS = {
  listening: z.object({
    ...proxyCommon,
    host: z.string(),
    port: z.int(),
    upstreamPort: z.int(),
    onTerm: z.enum(PROXY_ON_TERM_MODES),
  }),
  // id: the request's own ?id= when it has one (the app logs the same), else the proxy's p<n>.
  accepted: z.object({ ...proxyCommon, id: requestId, method: z.string(), path: z.string() }),
  forwarded: z.object({ ...proxyCommon, id: requestId }),
  // status: the app's, null when none came; bytes: the app's body bytes passed on to the client.
  'upstream-done': z.object({
    ...proxyCommon,
    id: requestId,
    outcome: z.enum(PROXY_OUTCOMES),
    status: z.int().nullable(),
    bytes: z.int().min(0),
    elapsedMs: z.number().min(0),
    error: z.string().optional(),
  }),
  rejected: z.object({ ...proxyCommon, id: requestId, reason: z.literal('draining') }),
  signal: z.object({ ...proxyCommon, signal: z.string(), repeated: z.boolean() }),
  draining: z.object({ ...proxyCommon, active: z.int().min(0) }),
  drained: z.object({ ...proxyCommon, completed: z.int().min(0), rejected: z.int().min(0) }),
  exit: z.object({ ...proxyCommon, code: z.int() }),
} as const satisfies Record<ProxyEventName, z.ZodType>;

export type ProxyLineOf<E extends ProxyEventName> = RoleLineOf<typeof PROXY_LINE_SCHEMAS, E>;
/** What the proxy's writer is passed: a line's own fields, without the stamped ones and the role. */
export type ProxyLineFields<E extends ProxyEventName> = RoleLineFields<typeof PROXY_LINE_SCHEMAS, E>;
/** One line of the proxy container's log, read as ParsedLabLine reads the app's. */
export type ParsedProxyLine = ParsedRoleLine<typeof PROXY_LINE_SCHEMAS, ProxyEventName>;
/** parseProxyLine: a parsed JSON value through the proxy's schemas; an app's line (no `role`) is malformed here. */
export const { isEventName: isProxyEventName, parse: parseProxyLine } = roleLines(
  PROXY_EVENT_NAMES,
  PROXY_LINE_SCHEMAS,
);

// --- the ledger's lines (server/ledger.ts, LAB_MODE=ledger) ------------------------------------

const ledgerCommon = roleCommon(LEDGER_ROLE);
/** One effect as the ledger recorded it: its number, the request, the key, and the pod that asked. */
const ledgerEffect = {
  ...ledgerCommon,
  seq: z.int().min(1),
  id: z.string().min(1),
  key: z.string().nullable(),
  fromPodUid: z.string().nullable(),
  fromPodName: z.string().nullable(),
  point: z.enum(['start', 'end']),
};

export const LEDGER_LINE_SCHEMAS = {
  listening: z.object({ ...ledgerCommon, host: z.string(), port: z.int() }),
  applied: z.object(ledgerEffect),
  // seq: the record that first applied this key; nothing new is recorded.
  'already-applied': z.object(ledgerEffect),
  signal: z.object({ ...ledgerCommon, signal: z.string() }),
  exit: z.object({ ...ledgerCommon, code: z.int(), records: z.int().min(0) }),
} as const satisfies Record<LedgerEventName, z.ZodType>;

export type LedgerLineOf<E extends LedgerEventName> = RoleLineOf<typeof LEDGER_LINE_SCHEMAS, E>;
export type LedgerLineFields<E extends LedgerEventName> = RoleLineFields<typeof LEDGER_LINE_SCHEMAS, E>;
export type ParsedLedgerLine = ParsedRoleLine<typeof LEDGER_LINE_SCHEMAS, LedgerEventName>;
/** parseLedgerLine: a parsed JSON value through the ledger's schemas; an app's line (no `role`) is malformed here. */
export const { isEventName: isLedgerEventName, parse: parseLedgerLine } = roleLines(
  LEDGER_EVENT_NAMES,
  LEDGER_LINE_SCHEMAS,
);

// --- the load generator's lines (server/load.ts) ----------------------------------------------

const Clock = z.object({ time: z.iso.datetime({ offset: true }), mono: z.number().min(0) });

export const LoadRecordSchema = z.object({
  event: z.literal('request'),
  seq: z.int().min(1),
  id: z.string().regex(/^L\d+$/),
  // requestId, method, latencyMs, reused and bodyHead came with the edge (issue 42): absent in older logs.
  /** The X-Termlab-Request header: the load pod's name and the id, unique per run. */
  requestId: z.string().min(1).optional(),
  method: z.enum(['GET', 'POST']).optional(),
  dueMono: z.number(),
  sent: Clock,
  connectedAt: Clock.nullable(),
  headersAt: Clock.nullable(),
  ended: Clock,
  /** ms from dueMono to ended: includes any wait for a free connection (coordinated omission). */
  latencyMs: z.number().min(0).optional(),
  /** Sent on a kept-alive connection an earlier request had used. */
  reused: z.boolean().optional(),
  status: z.int().nullable(),
  /** The first 120 bytes of a non-2xx body. */
  bodyHead: z.string().nullable().optional(),
  podUid: z.string().nullable(),
  outcome: z.enum(['completed', 'rejected', 'http-error', 'cut', 'failed']),
  errorCode: z.string().nullable(),
  stage: z.enum(['connect', 'request', 'body']).nullable(),
  bytes: z.int().min(0),
});
export const LoadStartSchema = z.object({
  event: z.literal('load-start'),
  time: z.string(),
  mono: z.number(),
  rate: z.number(),
  workMs: z.number(),
  planned: z.int(),
  connections: z.int().optional(),
  keepAlive: z.boolean().optional(),
  method: z.enum(['GET', 'POST']).optional(),
  host: z.string().nullable().optional(),
  requestIdPrefix: z.string().optional(),
});
export const LoadEndSchema = z.object({
  event: z.literal('load-end'),
  time: z.string(),
  mono: z.number(),
  sent: z.int(),
  completed: z.int(),
  rejected: z.int(),
  failed: z.int(),
});
export const LOAD_LINE_SCHEMAS = {
  'load-start': LoadStartSchema,
  request: LoadRecordSchema,
  'load-end': LoadEndSchema,
} as const;
export type LoadLine =
  | z.infer<typeof LoadStartSchema>
  | z.infer<typeof LoadRecordSchema>
  | z.infer<typeof LoadEndSchema>;

/** One line of the load pod's log as the contract reads it; null for anything else or a broken record. */
export function parseLoadLine(text: string): LoadLine | null {
  if (!text.startsWith('{')) return null;
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return null;
  }
  const event = (json as { event?: unknown } | null)?.event;
  if (event !== 'load-start' && event !== 'request' && event !== 'load-end') return null;
  const result = LOAD_LINE_SCHEMAS[event].safeParse(json);
  return result.success ? result.data : null;
}

// --- the preStop hook --------------------------------------------------------------------------

export const PreStopSchema = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('none') }),
  /** `lab-hook sleep <ms>`: an exec hook that logs its start and end. */
  z.object({ kind: z.literal('exec-sleep'), seconds: z.number().min(0).max(600) }),
  /** An exec hook that fails at once (`lab-hook fail`). */
  z.object({ kind: z.literal('exec-fail') }),
  /** The kubelet's own sleep (lifecycle.preStop.sleep): no trace inside the container. */
  z.object({ kind: z.literal('sleep-action'), seconds: z.int().min(0).max(600) }),
  z.object({
    kind: z.literal('httpGet'),
    ms: z.int().min(0).max(600_000),
    /** A port other than the server's (one nothing listens on makes the hook fail). */
    port: z.int().min(1).max(65535).optional(),
  }),
]);
export type PreStop = z.infer<typeof PreStopSchema>;

/** The server's own port as the pod spec names it: the container port's name, else its number. */
export type ServerPort = number | string;

/** A scenario's hook as a Kubernetes lifecycle handler; null for none. */
export function renderPreStop(preStop: PreStop, serverPort: ServerPort): Record<string, unknown> | null {
  switch (preStop.kind) {
    case 'none':
      return null;
    case 'exec-sleep':
      return { exec: { command: [HOOK_PROGRAM, HOOK_COMMANDS.sleep, String(Math.round(preStop.seconds * 1000))] } };
    case 'exec-fail':
      return { exec: { command: [HOOK_PROGRAM, HOOK_COMMANDS.fail] } };
    case 'sleep-action':
      return { sleep: { seconds: preStop.seconds } };
    case 'httpGet':
      return { httpGet: { path: `${HOOK_HTTP_PATH}?ms=${preStop.ms}`, port: preStop.port ?? serverPort } };
  }
}

const HTTP_PATH = new RegExp(`^${HOOK_HTTP_PATH.replace(/[/]/g, '\\/')}\\?ms=(\\d+)$`);

/**
 * A live pod's preStop handler back in the scenario's terms, or a sentence saying why it is none
 * the lab renders. The inverse of renderPreStop: an httpGet port other than the server's (by name
 * or number; the template names it) is the scenario's `port`.
 */
export function parsePreStop(handler: unknown, serverPort: ServerPort | ServerPort[] = []): PreStop | string {
  if (handler === undefined || handler === null) return { kind: 'none' };
  if (typeof handler !== 'object' || Array.isArray(handler)) return 'a preStop hook that is not an object';
  const h = handler as Record<string, any>;
  const kinds = Object.keys(h).filter((k) => h[k] !== undefined && h[k] !== null);
  const what = `a preStop hook the lab does not render (${kinds.join(', ').slice(0, 80) || 'empty'})`;
  if (kinds.length !== 1) return what;
  const command = h.exec?.command;
  if (Array.isArray(command) && command[0] === HOOK_PROGRAM) {
    if (command.length === 3 && command[1] === HOOK_COMMANDS.sleep && /^\d{1,6}$/.test(String(command[2]))) {
      const seconds = Number(command[2]) / 1000;
      return seconds <= 600 ? { kind: 'exec-sleep', seconds } : what;
    }
    if (command.length === 2 && command[1] === HOOK_COMMANDS.fail) return { kind: 'exec-fail' };
    return what;
  }
  if (h.sleep && Number.isInteger(h.sleep.seconds) && h.sleep.seconds >= 0 && h.sleep.seconds <= 600)
    return { kind: 'sleep-action', seconds: h.sleep.seconds };
  if (h.httpGet && typeof h.httpGet.path === 'string') {
    const ms = HTTP_PATH.exec(h.httpGet.path)?.[1];
    if (ms === undefined || Number(ms) > 600_000) return what;
    const port = h.httpGet.port;
    const own = ([] as ServerPort[]).concat(serverPort);
    if (typeof port === 'string' || own.includes(port)) return { kind: 'httpGet', ms: Number(ms) };
    if (Number.isInteger(port) && port >= 1 && port <= 65535) return { kind: 'httpGet', ms: Number(ms), port };
    return what;
  }
  return what;
}

/** What the lab container runs as in one scenario (or one version of a rollout's template). */
export interface LabContainerSettings {
  image?: string;
  mode: LabMode;
  preStop: PreStop;
  termAllocateMiB?: number;
  /** The retries lab: where the work calls the ledger, and the ledger's address. */
  effect?: { point: EffectPoint; ledgerUrl: string };
  /** The stop-signal lesson: LAB_DRAIN_SIGNAL (unset: SIGTERM, the server's default). */
  drainSignal?: LabDrainSignal;
  /** lifecycle.stopSignal, as the API names it; the pod must then say spec.os.name (the pod renderer's job). */
  stopSignal?: string;
}

/**
 * Sets the lab container's image, the server's mode (and its memory-on-TERM setting and drain signal), its
 * preStop hook and stop signal, leaving every other field as the template has it. Mutates `container`.
 */
export function configureLabContainer(container: Record<string, any>, s: LabContainerSettings): void {
  if (s.image) container.image = s.image;
  const ours = new Set([LAB_MODE_ENV, LAB_TERM_ALLOCATE_ENV, LAB_EFFECT_ENV, LAB_LEDGER_URL_ENV, LAB_DRAIN_SIGNAL_ENV]);
  container.env = [
    ...(container.env ?? []).filter((e: any) => !ours.has(e.name)),
    { name: LAB_MODE_ENV, value: s.mode },
  ];
  if (s.termAllocateMiB) container.env.push({ name: LAB_TERM_ALLOCATE_ENV, value: String(s.termAllocateMiB) });
  if (s.drainSignal) container.env.push({ name: LAB_DRAIN_SIGNAL_ENV, value: s.drainSignal });
  if (s.effect)
    container.env.push(
      { name: LAB_EFFECT_ENV, value: s.effect.point },
      { name: LAB_LEDGER_URL_ENV, value: s.effect.ledgerUrl },
    );
  const port = container.ports?.[0];
  const hook = renderPreStop(s.preStop, port?.name ?? port?.containerPort);
  const lifecycle = { ...container.lifecycle };
  if (hook) lifecycle.preStop = hook;
  else delete lifecycle.preStop;
  // The scenario's, as the hook is: a template's own would make the run's signal no one's choice.
  if (s.stopSignal) lifecycle.stopSignal = s.stopSignal;
  else delete lifecycle.stopSignal;
  if (Object.keys(lifecycle).length) container.lifecycle = lifecycle;
  else delete container.lifecycle;
}
