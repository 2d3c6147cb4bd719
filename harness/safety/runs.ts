// Local records of runs: one small file per run, so concurrent runs never write the same file.
// A record only ever proves a run alive; its absence never makes anything an orphan.
import { readdir } from 'node:fs/promises';
import { homedir, hostname } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import { unwritable } from '../../lib/errors.ts';
import { makeDirectory, readJsonFile, writeFileAtomic } from '../../lib/files.ts';

const RunRecordSchema = z.object({
  runId: z.string(),
  owner: z.string(),
  context: z.string(),
  namespace: z.string(),
  pid: z.int(),
  host: z.string(),
  startedAt: z.iso.datetime(),
  deadline: z.iso.datetime(),
  /** interrupted: stopped by Ctrl-C; its pods were cleaned up, its results are not a run to hand in. */
  status: z.enum(['running', 'finished', 'failed', 'interrupted']),
  note: z.string().optional(),
  /** Who the cluster said ran it (SelfSubjectReview), or null where the API did not say. */
  identity: z.string().nullable().optional(),
  /** Where the owner label came from: the cluster's answer, --owner, or termlab's own name (the fallback). */
  ownerSource: z.enum(['SelfSubjectReview', '--owner', 'termlab']).optional(),
  /** The predictions sealed before the run's first pod (their hash; the content is in every observation). */
  predictions: z.object({ sha256: z.string(), sealedAt: z.iso.datetime() }).optional(),
});
export type RunRecord = z.infer<typeof RunRecordSchema>;

export function stateDir(): string {
  if (process.env.TERMLAB_STATE_DIR) return process.env.TERMLAB_STATE_DIR;
  return join(process.env.XDG_STATE_HOME || join(homedir(), '.local', 'state'), 'termlab');
}

const recordPath = (runId: string) => join(stateDir(), 'runs', `${runId}.json`);

export async function saveRun(record: RunRecord): Promise<void> {
  const path = recordPath(record.runId);
  try {
    await makeDirectory(join(stateDir(), 'runs'));
    await writeFileAtomic(path, JSON.stringify(RunRecordSchema.parse(record), null, 2) + '\n');
  } catch (error) {
    throw unwritable('STATE_UNWRITABLE', 'the run record (TERMLAB_STATE_DIR or XDG_STATE_HOME)', path, error);
  }
}

export async function readRun(runId: string): Promise<RunRecord | null> {
  // A missing or broken record proves nothing alive: treated as no record.
  const read = await readJsonFile(recordPath(runId), RunRecordSchema);
  return read.ok ? read.value : null;
}

export async function listRuns(): Promise<RunRecord[]> {
  let names: string[];
  try {
    names = await readdir(join(stateDir(), 'runs'));
  } catch {
    return [];
  }
  const records = await Promise.all(names.filter((n) => n.endsWith('.json')).map((n) => readRun(n.slice(0, -5))));
  return records.filter((r): r is RunRecord => r !== null);
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Alive: recorded as running, on this host, its process still there, and before its deadline. */
export function liveness(record: RunRecord, now = Date.now()): { alive: boolean; why: string } {
  if (record.status !== 'running') return { alive: false, why: `run ${record.runId} is ${record.status}` };
  if (Date.parse(record.deadline) < now)
    return { alive: false, why: `run ${record.runId} passed its deadline ${record.deadline}` };
  if (record.host !== hostname())
    return {
      alive: true,
      why: `run ${record.runId} belongs to host ${record.host}; only its deadline can end it here`,
    };
  if (!processAlive(record.pid)) return { alive: false, why: `run ${record.runId}'s process ${record.pid} is gone` };
  return { alive: true, why: `run ${record.runId} is alive (pid ${record.pid})` };
}

export function newRunRecord(fields: Omit<RunRecord, 'pid' | 'host' | 'status' | 'startedAt'>): RunRecord {
  return { ...fields, pid: process.pid, host: hostname(), status: 'running', startedAt: new Date().toISOString() };
}
