// The crawl log fixture of test/api/crawl-logs.test.ts, written on both engines: entries whose
// every field varies, kept as a model with their ids on each engine.
import { expect } from 'bun:test'
import { LOG_STEPS, type LogEntry } from '../../../src/store/crawl-logs'
import { newRuns, type Engine, type RunIds } from './crawl-log-engines'

export const MIN = 60_000
export const HOUR = 60 * MIN
export const DAY = 24 * HOUR
// Sunday 2026-01-04 23:00Z: the entries cross a day and a week boundary (weeks start Monday).
export const BASE = Date.UTC(2026, 0, 4, 23, 0, 0)
export const HOSTS = ['a.example', 'b.example', 'c.example']
export const iso = (ms: number) => new Date(ms).toISOString()

/** An entry as written, with its id on each engine and its place in write order. */
export type Model = Omit<LogEntry, 'run_seq'> & { ids: string[]; i: number }
/** A run on both engines (the same ids), with what was written to it. */
export type Run = { id: string; job_id: string; seqs: number[]; entries: Model[] }

export async function newRun(engines: Engine[], tenant = 'acme', id?: string): Promise<Run> {
  const runs: RunIds[] = await newRuns(engines, tenant, id)
  return { id: runs[0]!.id, job_id: runs[0]!.job_id, seqs: runs.map((r) => r.seq), entries: [] }
}

export const hash = (i: number) => (i.toString(16).padStart(8, '0') + 'f'.repeat(32)).slice(0, 32)

/** Entry i of a fixture run: every field varies with i, and pairs of entries share a time. */
export function fixture(i: number, occurredAt = BASE + Math.floor(i / 2) * 74_000): Omit<LogEntry, 'run_seq'> {
  const step = LOG_STEPS[i % 7]!
  const status = i % 10 === 3 ? 'error' : i % 10 === 7 ? 'skipped' : i % 25 === 0 ? 'retried' : 'ok'
  const host = HOSTS[i % 3]!
  const e: Omit<LogEntry, 'run_seq'> = { url: `https://${host}/p/${i}?q=a,b`, url_hash: hash(i), host, step, status, occurred_at: occurredAt }
  if (status === 'error') {
    e.error_reason = i % 20 === 3 ? 'timeout' : 'http_status'
    e.error_detail = `failure ${i} "quoted", {braced} \\ NULL`
  }
  if (status === 'skipped') e.error_reason = 'robots_disallowed'
  if (step === 'parse' || step === 'extract') e.pipeline_id = i % 3 === 0 ? 'main' : 'alt'
  if (step === 'fetch') e.http_status = e.error_reason === 'http_status' ? 503 : i % 4 === 0 ? 404 : 200
  if (step === 'fetch' || step === 'parse' || step === 'robots') e.latency_ms = ((i * 7919) % 997) + (i % 3) * 0.25
  if (i % 6 !== 0) e.depth = i % 4
  if (i % 5 !== 0) e.parent_url_hash = hash(i - 1)
  return e
}

/** Writes the entries on both engines, each batch in one transaction, and keeps them with their ids. */
export async function write(engines: Engine[], run: Run, entries: Omit<LogEntry, 'run_seq'>[]) {
  const ids: string[][] = []
  for (const [k, e] of engines.entries()) ids.push(await e.writeLogs(entries.map((x) => ({ ...x, run_seq: run.seqs[k]! }))))
  entries.forEach((x, j) => run.entries.push({ ...x, ids: ids.map((engineIds) => engineIds[j]!), i: run.entries.length }))
}

/** Most recent first; entries of one instant in reverse write order. */
export const newestFirst = (ms: Model[]) => [...ms].sort((a, b) => b.occurred_at - a.occurred_at || b.i - a.i)

/** The same answer from every engine. */
export async function same<T>(engines: Engine[], read: (e: Engine) => Promise<T>): Promise<T> {
  const answers: T[] = []
  for (const e of engines) answers.push(await read(e))
  for (const a of answers.slice(1)) expect(a).toEqual(answers[0]!)
  return answers[0]!
}
