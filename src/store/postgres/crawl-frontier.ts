import type { CrawlBatch, FrontierMark, RunCounters } from '../crawl-store'
import { DONE, FAILED, QUEUED } from '../frontier'
import { first, numeric, type Pg } from './pg'

/**
 * The frontier's SQL of a run's execution (the port of src/store/frontier.ts), each a statement
 * over one run whose lease the caller holds: only its holder writes a run's frontier and run_hosts
 * rows, so none of these needs a lock of its own beyond the run row the commit takes. A batch's
 * rows of one kind go in one statement over arrays (unnest), whatever their number: a fixed
 * statement text, prepared once, and one round trip.
 */

/** Leases left by a process that died go back to the queue (design.md §5 rule 3). */
export async function reclaim(tx: Pg, runSeq: number): Promise<void> {
  await tx`UPDATE frontier SET state = 0, lease_until = NULL WHERE run_seq = ${runSeq} AND state = 1`
}

/** The run's URLs that failed, by reason (a JSON object kept beside the counters); {} for a run that is gone. */
export async function errorCounts(sql: Pg, runSeq: number): Promise<Record<string, number>> {
  const row = first<{ error_counts: string }>(await sql`SELECT error_counts FROM runs WHERE seq = ${runSeq}`)
  return JSON.parse(row?.error_counts ?? '{}') as Record<string, number>
}

/** New frontier rows of every group of the batch, in one statement; a seq already there stays as it is (INSERT OR IGNORE). */
export async function enqueue(tx: Pg, runSeq: number, groups: CrawlBatch['enqueued']): Promise<void> {
  const seqs: number[] = []
  const hashes: string[] = []
  const urls: string[] = []
  const hosts: string[] = []
  const depths: number[] = []
  const parents: (string | null)[] = []
  const kinds: number[] = []
  const states: number[] = []
  for (const g of groups) {
    const state = g.done ? DONE : QUEUED
    g.entries.forEach((e, i) => {
      seqs.push(g.first + i)
      hashes.push(e.hash)
      urls.push(e.url)
      hosts.push(e.host)
      depths.push(e.depth)
      parents.push(e.parent)
      kinds.push(e.kind)
      states.push(state)
    })
  }
  if (!seqs.length) return
  await tx`INSERT INTO frontier (run_seq, seq, hash, url, host, depth, parent, kind, state)
    SELECT ${runSeq}, * FROM unnest(${tx.array(seqs, 'int8')}, ${tx.array(hashes, 'text')}, ${tx.array(urls, 'text')}, ${tx.array(hosts, 'text')},
      ${tx.array(depths, 'int4')}, ${tx.array(parents, 'text')}, ${tx.array(kinds, 'int4')}, ${tx.array(states, 'int4')})
    ON CONFLICT DO NOTHING`
}

/**
 * What a row's moves in one batch add up to, applied in the order made by SQLite's statements:
 * each sets the state and clears the lease; a requeue also adds an attempt and sets not_before.
 * So a row ends in its last move's state, with one attempt more per requeue, and the last
 * requeue's not_before (or its own when it was not requeued). One row per seq: a statement over
 * arrays may not update a row twice.
 */
export type FoldedMoves = { seqs: number[]; states: number[]; attempts: number[]; notBefore: (number | null)[] }

export function foldMoves(marks: readonly FrontierMark[]): FoldedMoves {
  const bySeq = new Map<number, { state: number; attempts: number; notBefore: number | null }>()
  for (const m of marks) {
    let row = bySeq.get(m.seq)
    if (!row) bySeq.set(m.seq, (row = { state: QUEUED, attempts: 0, notBefore: null }))
    if (m.to === 'requeued') {
      row.state = QUEUED
      row.attempts++
      row.notBefore = m.notBefore
    } else row.state = m.to === 'done' ? DONE : FAILED
  }
  const out: FoldedMoves = { seqs: [], states: [], attempts: [], notBefore: [] }
  for (const [seq, row] of bySeq) {
    out.seqs.push(seq)
    out.states.push(row.state)
    out.attempts.push(row.attempts)
    out.notBefore.push(row.notBefore)
  }
  return out
}

/** The batch's frontier moves (a seq the run does not have is no move, as in SQLite). */
export async function applyMarks(tx: Pg, runSeq: number, marks: readonly FrontierMark[]): Promise<void> {
  if (!marks.length) return
  const m = foldMoves(marks)
  await tx`UPDATE frontier f SET state = m.state, lease_until = NULL, attempts = f.attempts + m.attempts, not_before = coalesce(m.not_before, f.not_before)
    FROM unnest(${tx.array(m.seqs, 'int8')}, ${tx.array(m.states, 'int4')}, ${tx.array(m.attempts, 'int4')}, ${tx.array(m.notBefore, 'int8')}) AS m (seq, state, attempts, not_before)
    WHERE f.run_seq = ${runSeq} AND f.seq = m.seq`
}

/** Hosts' counts of consecutive failed fetches; a row without robots.txt yet keeps it null. */
export async function saveHostFailures(tx: Pg, runSeq: number, failures: Map<string, number>): Promise<void> {
  if (!failures.size) return
  await tx`INSERT INTO run_hosts (run_seq, host, failures)
    SELECT ${runSeq}, * FROM unnest(${tx.array([...failures.keys()], 'text')}, ${tx.array([...failures.values()], 'int4')})
    ON CONFLICT (run_seq, host) DO UPDATE SET failures = excluded.failures`
}

/** Fails what is still queued or leased; how many rows that was. */
export async function failQueued(tx: Pg, runSeq: number): Promise<number> {
  const result = await tx`UPDATE frontier SET state = 3, lease_until = NULL WHERE run_seq = ${runSeq} AND state IN (0, 1)`
  return result.count
}

/** The run's frontier rows by state. */
export async function counts(tx: Pg, runSeq: number): Promise<Record<'queued' | 'leased' | 'done' | 'failed', number>> {
  const out = { queued: 0, leased: 0, done: 0, failed: 0 }
  for (const r of numeric<{ state: number; n: number }>(await tx`SELECT state, count(*) AS n FROM frontier WHERE run_seq = ${runSeq} GROUP BY state`)) {
    out[(['queued', 'leased', 'done', 'failed'] as const)[r.state]!] = r.n
  }
  return out
}

/** The run's counters, and its error counts when given (null keeps the stored ones). */
export async function saveCounters(tx: Pg, runSeq: number, c: RunCounters, errorCounts: Record<string, number> | null): Promise<void> {
  const ec = errorCounts ? JSON.stringify(errorCounts) : null
  await tx`UPDATE runs SET queued = ${c.queued}, visited = ${c.visited}, failed = ${c.failed}, bytes = ${c.bytes}, fetched = ${c.fetched}, depth_cut = ${c.depth_cut},
    error_counts = coalesce(${ec}::text, error_counts) WHERE seq = ${runSeq}`
}
