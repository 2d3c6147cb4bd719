// The witness (LAB_MODE=witness): the instructor's in-cluster record of every lab pod of a class, kept
// where students can read it but not write it (one ConfigMap per pod in an instructor-only namespace).
// It lists and watches the lab pods (by label), and keeps per pod what the API showed: owner, scenario,
// creation, deletion and grace, each container's terminated state, the pod's events, and when it was gone.
// Memory is only a cache: every cycle starts by reading the records back, then relists the pods, so a
// restart loses nothing the API still shows. A pod created and removed entirely while no witness ran is
// never seen: its hand-in then has `no record`, which sends it to the instructor, never to a false "yes".
import { existsSync, readFileSync } from 'node:fs';
import { clockNow, type EventSink, stdoutSink } from './events.ts';
import {
  WITNESS_DATA_KEY,
  WITNESS_RECORD_LABEL,
  WITNESS_RECORD_PREFIX,
  WITNESS_RECORD_VERSION,
  type WitnessContainer,
  type WitnessEvent,
  type WitnessRecord,
} from './contract.ts';
import { type Api, ApiCallError, createApi } from './kube-api.ts';

const SA_DIR = '/var/run/secrets/kubernetes.io/serviceaccount';
const WATCH_SECONDS = 300;
const RETRY_MS = 1000;

export interface WitnessConfig {
  server: string;
  tokenFile: string;
  caFile: string;
  /** Which pods are lab pods of the class (a label selector). */
  selector: string;
  /** The class's namespace: a pod in CLASS-NAME is student NAME's (`termlab class student`). */
  classNamespace: string;
  /** Where the records go: instructor-only. */
  recordsNamespace: string;
}

export class WitnessConfigError extends Error {
  readonly code = 'WITNESS_CONFIG_INVALID';
}

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

export function parseWitnessConfig(env: NodeJS.ProcessEnv): WitnessConfig {
  const host = env.KUBERNETES_SERVICE_HOST;
  const server =
    env.WITNESS_API_SERVER ||
    (host ? `https://${host.includes(':') ? `[${host}]` : host}:${env.KUBERNETES_SERVICE_PORT || '443'}` : '');
  if (!/^https:\/\/\S+$/.test(server))
    throw new WitnessConfigError(
      `WITNESS_API_SERVER: expected the API server's https:// URL (in a pod, KUBERNETES_SERVICE_HOST gives it), got ${JSON.stringify(server)}`,
    );
  const tokenFile = env.WITNESS_TOKEN_FILE || `${SA_DIR}/token`;
  const caFile = env.WITNESS_CA_FILE || `${SA_DIR}/ca.crt`;
  for (const [name, file] of [
    ['WITNESS_TOKEN_FILE', tokenFile],
    ['WITNESS_CA_FILE', caFile],
  ] as const)
    if (!existsSync(file))
      throw new WitnessConfigError(
        `${name}: ${file} does not exist (mount the ServiceAccount token: automountServiceAccountToken: true)`,
      );
  const ownNamespace = existsSync(`${SA_DIR}/namespace`) ? readFileSync(`${SA_DIR}/namespace`, 'utf8').trim() : '';
  const recordsNamespace = env.WITNESS_RECORDS_NAMESPACE || ownNamespace;
  if (!DNS_LABEL.test(recordsNamespace))
    throw new WitnessConfigError(
      `WITNESS_RECORDS_NAMESPACE: expected the namespace the records go to (default: the pod's own), got ${JSON.stringify(recordsNamespace)}`,
    );
  const classNamespace = env.WITNESS_CLASS || 'termlab';
  if (!DNS_LABEL.test(classNamespace))
    throw new WitnessConfigError(
      `WITNESS_CLASS: expected the class's namespace, got ${JSON.stringify(classNamespace)}`,
    );
  const selector = env.WITNESS_SELECTOR ?? '';
  if (!/^[A-Za-z0-9./_=,!-]+$/.test(selector) || !selector.includes('='))
    throw new WitnessConfigError(
      `WITNESS_SELECTOR: expected the lab pods' label selector, such as app.kubernetes.io/managed-by=termlab,termlab.io/env=termlab-class, got ${JSON.stringify(selector)}`,
    );
  return { server, tokenFile, caFile, selector, classNamespace, recordsNamespace };
}

const label = (pod: any, key: string): string | null => pod.metadata?.labels?.[key] ?? null;

/** The student whose namespace the pod is in: the only namespace their RBAC lets them make pods in. */
export function studentOf(namespace: string, classNamespace: string): string | null {
  const prefix = `${classNamespace}-`;
  return namespace.startsWith(prefix) && namespace.length > prefix.length ? namespace.slice(prefix.length) : null;
}

function terminatedOf(pod: any): WitnessContainer[] {
  const out: WitnessContainer[] = [];
  for (const [list, init] of [
    [pod.status?.containerStatuses, false],
    [pod.status?.initContainerStatuses, true],
  ] as const) {
    for (const s of list ?? []) {
      const t = s.state?.terminated;
      if (!t) continue;
      out.push({
        name: s.name,
        init,
        exitCode: t.exitCode,
        reason: t.reason ?? null,
        startedAt: t.startedAt ?? null,
        finishedAt: t.finishedAt ?? null,
      });
    }
  }
  return out;
}

/** The record a pod's state makes, on top of what was already recorded (a set field is never erased). */
export function recordOf(pod: any, before: WitnessRecord | null, classNamespace: string): WitnessRecord {
  const m = pod.metadata ?? {};
  const containers = new Map((before?.containers ?? []).map((c) => [c.name, c]));
  for (const c of terminatedOf(pod)) containers.set(c.name, c);
  const now = clockNow().time;
  // The deletion as first seen: once the containers end, the kubelet's own delete (grace 0) rewrites both.
  const firstDeletion = before?.deletionTimestamp == null && m.deletionTimestamp != null;
  return {
    version: WITNESS_RECORD_VERSION,
    uid: m.uid,
    namespace: m.namespace,
    name: m.name,
    student: studentOf(m.namespace, classNamespace),
    ownerLabel: label(pod, 'termlab.io/owner'),
    scenario: label(pod, 'termlab.io/scenario'),
    runId: label(pod, 'termlab.io/run'),
    created: m.creationTimestamp ?? before?.created ?? null,
    deletionTimestamp: before?.deletionTimestamp ?? m.deletionTimestamp ?? null,
    grace: before?.deletionTimestamp != null ? before.grace : (m.deletionGracePeriodSeconds ?? null),
    lateDeletion: firstDeletion ? terminatedOf(pod).length > 0 : (before?.lateDeletion ?? false),
    terminationGracePeriodSeconds:
      pod.spec?.terminationGracePeriodSeconds ?? before?.terminationGracePeriodSeconds ?? null,
    containers: [...containers.values()],
    events: before?.events ?? [],
    goneAt: before?.goneAt ?? null,
    goneSeenBy: before?.goneSeenBy ?? null,
    podResourceVersion: m.resourceVersion ?? before?.podResourceVersion ?? '',
    firstSeenAt: before?.firstSeenAt ?? now,
  };
}

/** Two records of one pod (a write raced another witness's): every fact either holds, the later state on top. */
export function mergeRecords(a: WitnessRecord, b: WitnessRecord): WitnessRecord {
  const newer = Number(b.podResourceVersion) >= Number(a.podResourceVersion) ? b : a;
  const older = newer === b ? a : b;
  const containers = new Map(older.containers.map((c) => [c.name, c]));
  for (const c of newer.containers) containers.set(c.name, c);
  const deletedFirst = older.deletionTimestamp ? older : newer;
  return {
    ...newer,
    deletionTimestamp: deletedFirst.deletionTimestamp,
    grace: deletedFirst.grace,
    lateDeletion: deletedFirst.lateDeletion,
    containers: [...containers.values()],
    events: newer.events.length >= older.events.length ? newer.events : older.events,
    goneAt: older.goneAt ?? newer.goneAt,
    goneSeenBy: older.goneAt ? older.goneSeenBy : newer.goneSeenBy,
    firstSeenAt: [a.firstSeenAt, b.firstSeenAt].sort()[0]!,
  };
}

const sameRecord = (a: WitnessRecord, b: WitnessRecord) => JSON.stringify(a) === JSON.stringify(b);

interface Stored {
  record: WitnessRecord;
  /** The ConfigMap's resourceVersion: a write names it, so a stale one is refused (409). */
  version: string;
}

export function runWitness(config: WitnessConfig, sink: EventSink = stdoutSink) {
  const api: Api = createApi(config);
  const log = (event: string, fields: object = {}) =>
    sink(`${JSON.stringify({ event, ...clockNow(), role: 'witness', ...fields })}\n`);
  const stored = new Map<string, Stored>();
  const recordsPath = `/api/v1/namespaces/${config.recordsNamespace}/configmaps`;
  const selector = encodeURIComponent(config.selector);
  let stopping = false;
  let abortWatch = () => {};
  let wake = () => {};

  function configMap(record: WitnessRecord, version?: string) {
    return {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: {
        name: `${WITNESS_RECORD_PREFIX}${record.uid}`,
        namespace: config.recordsNamespace,
        labels: { 'app.kubernetes.io/managed-by': 'termlab', [WITNESS_RECORD_LABEL]: 'pod' },
        ...(version ? { resourceVersion: version } : {}),
      },
      data: { [WITNESS_DATA_KEY]: `${JSON.stringify(record, null, 1)}\n` },
    };
  }

  const parseStored = (cm: any): Stored | null => {
    try {
      const record = JSON.parse(cm.data?.[WITNESS_DATA_KEY] ?? '') as WitnessRecord;
      return typeof record.uid === 'string' ? { record, version: cm.metadata.resourceVersion } : null;
    } catch {
      return null;
    }
  };

  /** Create or replace the pod's record; a stale write reads the record again and merges. */
  async function save(record: WitnessRecord, why: string): Promise<void> {
    for (let tries = 0; tries < 5; tries++) {
      const known = stored.get(record.uid);
      if (known && sameRecord(known.record, record)) return;
      const answer = known
        ? await api.call(
            'PUT',
            `${recordsPath}/${WITNESS_RECORD_PREFIX}${record.uid}`,
            configMap(record, known.version),
          )
        : await api.call('POST', recordsPath, configMap(record));
      if (answer.status === 200 || answer.status === 201) {
        stored.set(record.uid, { record, version: answer.body.metadata.resourceVersion });
        log('recorded', {
          uid: record.uid,
          pod: `${record.namespace}/${record.name}`,
          why,
          podResourceVersion: record.podResourceVersion,
          recordVersion: answer.body.metadata.resourceVersion,
          gone: record.goneAt !== null,
        });
        return;
      }
      if (answer.status !== 409 && answer.status !== 404)
        throw new ApiCallError(
          `writing the record of pod ${record.uid}: HTTP ${answer.status} ${answer.body?.message ?? ''}`,
          answer.status,
        );
      // Conflict: someone (an earlier witness) wrote it; read it and merge. 404 on PUT: it went, create again.
      const current = await api.call('GET', `${recordsPath}/${WITNESS_RECORD_PREFIX}${record.uid}`);
      const found = current.status === 200 ? parseStored(current.body) : null;
      if (found) {
        stored.set(record.uid, found);
        record = mergeRecords(found.record, record);
      } else stored.delete(record.uid);
    }
    throw new ApiCallError(`writing the record of pod ${record.uid}: still conflicting after 5 tries`, 409);
  }

  async function eventsOf(record: WitnessRecord): Promise<WitnessEvent[]> {
    const fields = encodeURIComponent(`involvedObject.uid=${record.uid}`);
    const answer = await api.call('GET', `/api/v1/namespaces/${record.namespace}/events?fieldSelector=${fields}`);
    if (answer.status !== 200) return record.events;
    const events: WitnessEvent[] = (answer.body.items ?? []).map((e: any) => ({
      reason: e.reason ?? '',
      type: e.type ?? '',
      message: e.message ?? '',
      count: e.count ?? e.series?.count ?? 1,
      firstTimestamp: e.firstTimestamp ?? e.eventTime ?? null,
      lastTimestamp: e.lastTimestamp ?? e.series?.lastObservedTime ?? e.eventTime ?? null,
    }));
    return events.length >= record.events.length ? events : record.events;
  }

  async function observe(pod: any, why: string): Promise<void> {
    const uid = pod.metadata?.uid;
    if (!uid) return;
    await save(recordOf(pod, stored.get(uid)?.record ?? null, config.classNamespace), why);
  }

  async function gone(uid: string, seenBy: 'watch' | 'relist'): Promise<void> {
    const known = stored.get(uid);
    if (!known || known.record.goneAt) return;
    const record = { ...known.record, goneAt: clockNow().time, goneSeenBy: seenBy };
    record.events = await eventsOf(record);
    await save(record, `gone (${seenBy})`);
  }

  async function loadRecords(): Promise<void> {
    const answer = await api.call(
      'GET',
      `${recordsPath}?labelSelector=${encodeURIComponent(`${WITNESS_RECORD_LABEL}=pod`)}`,
    );
    if (answer.status !== 200)
      throw new ApiCallError(
        `listing the records in ${config.recordsNamespace}: HTTP ${answer.status} ${answer.body?.message ?? ''}`,
        answer.status,
      );
    stored.clear();
    for (const cm of answer.body.items ?? []) {
      const found = parseStored(cm);
      if (found) stored.set(found.record.uid, found);
    }
  }

  /** One cycle: the records read back, the pods relisted, then watched until the watch expires (410) or fails. */
  async function cycle(): Promise<void> {
    await loadRecords();
    const list = await api.call('GET', `/api/v1/pods?labelSelector=${selector}`);
    if (list.status !== 200)
      throw new ApiCallError(`listing the lab pods: HTTP ${list.status} ${list.body?.message ?? ''}`, list.status);
    const present = new Set<string>();
    for (const pod of list.body.items ?? []) {
      present.add(pod.metadata.uid);
      await observe(pod, 'list');
    }
    for (const [uid, s] of stored) if (!present.has(uid) && !s.record.goneAt) await gone(uid, 'relist');
    let from: string = list.body.metadata?.resourceVersion ?? '';
    log('listed', { pods: present.size, records: stored.size, resourceVersion: from });
    while (!stopping) {
      let expired = false;
      let chain = Promise.resolve();
      const w = api.watch(
        `/api/v1/pods?watch=1&allowWatchBookmarks=true&timeoutSeconds=${WATCH_SECONDS}&labelSelector=${selector}&resourceVersion=${from}`,
        (event) => {
          chain = chain.then(async () => {
            if (expired) return;
            if (event.type === 'ERROR') {
              expired = true;
              log('watch-expired', { code: event.object?.code ?? null, resourceVersion: from });
              w.abort();
              return;
            }
            from = event.object?.metadata?.resourceVersion ?? from;
            if (event.type === 'BOOKMARK') return;
            await observe(event.object, `watch ${event.type}`);
            if (event.type === 'DELETED') await gone(event.object.metadata.uid, 'watch');
          });
        },
      );
      abortWatch = w.abort;
      log('watching', { resourceVersion: from });
      try {
        await w.ended;
      } catch (error) {
        if (!expired && !stopping) throw error;
      }
      await chain;
      if (expired) return;
    }
  }

  const done = (async () => {
    log('witness-start', {
      pid: process.pid,
      selector: config.selector,
      classNamespace: config.classNamespace,
      recordsNamespace: config.recordsNamespace,
    });
    while (!stopping) {
      try {
        await cycle();
      } catch (error) {
        if (stopping) break;
        log('witness-error', { detail: error instanceof Error ? error.message : String(error) });
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, RETRY_MS);
          wake = () => {
            clearTimeout(timer);
            resolve();
          };
        });
      }
    }
    api.close();
    log('witness-end', { records: stored.size });
  })();

  return {
    done,
    stop() {
      stopping = true;
      abortWatch();
      wake();
    },
  };
}
