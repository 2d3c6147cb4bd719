// One JSON object per line: the lab's evidence of what happened inside the container.
// process.stdout is synchronous for files and pipes on Linux, so a line is out before exit;
// a raw writeSync(1) would throw EAGAIN on a full non-blocking pipe.
// Each event's fields are typed by its schema in the contract (a type-only import: nothing of zod
// is loaded here, so the image stays node and server/ alone).
import { performance } from 'node:perf_hooks';
import type { LabLineFields, LedgerLineFields, ProxyLineFields } from './contract-schemas.ts';
import { type LabEventName, type LedgerEventName, LEDGER_ROLE, PROXY_ROLE, type ProxyEventName } from './contract.ts';

export type { LabEventName };

export interface Clock {
  time: string; // wall clock, ISO 8601 with milliseconds
  mono: number; // ms since this process's time origin, monotonic
}

export function clockNow(): Clock {
  const mono = performance.now();
  return { time: new Date(performance.timeOrigin + mono).toISOString(), mono: Math.round(mono * 1000) / 1000 };
}

export interface EventIdentity {
  podUid?: string;
  podName?: string;
}

export type EventSink = (line: string) => void;

export const stdoutSink: EventSink = (line) => {
  process.stdout.write(line);
};

export function createEventLog(identity: EventIdentity, sink: EventSink = stdoutSink) {
  return function logEvent<E extends LabEventName>(
    event: E,
    ...rest: Partial<LabLineFields<E>> extends LabLineFields<E>
      ? [fields?: LabLineFields<E>]
      : [fields: LabLineFields<E>]
  ): void {
    const fields = rest[0] ?? {};
    const record = { event, ...clockNow(), pid: process.pid, ...identity, ...fields };
    sink(JSON.stringify(record) + '\n');
  };
}

export type LogEvent = ReturnType<typeof createEventLog>;

/** The proxy's writer (server/proxy.ts): its own events, each line stamped `role: "proxy"`. */
export function createProxyEventLog(identity: EventIdentity, sink: EventSink = stdoutSink) {
  return function logEvent<E extends ProxyEventName>(event: E, fields: ProxyLineFields<E>): void {
    const record = { event, ...clockNow(), pid: process.pid, ...identity, role: PROXY_ROLE, ...fields };
    sink(JSON.stringify(record) + '\n');
  };
}

export type LogProxyEvent = ReturnType<typeof createProxyEventLog>;

/** The ledger's writer (server/ledger.ts): its own events, each line stamped `role: "ledger"`. */
export function createLedgerEventLog(identity: EventIdentity, sink: EventSink = stdoutSink) {
  return function logEvent<E extends LedgerEventName>(event: E, fields: LedgerLineFields<E>): void {
    const record = { event, ...clockNow(), pid: process.pid, ...identity, role: LEDGER_ROLE, ...fields };
    sink(JSON.stringify(record) + '\n');
  };
}

export type LogLedgerEvent = ReturnType<typeof createLedgerEventLog>;
