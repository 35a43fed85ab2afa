import type { CrawlBatch, FrontierMark } from '../crawl-store'
import { DONE, FAILED, QUEUED } from '../frontier'
import { first, numeric, type Pg } from './pg'

/**
 * The frontier's SQL of a run's execution (the port of src/store/frontier.ts), each a statement
 * over one run whose lease the caller holds: only its holder writes a run's frontier and run_hosts
 * rows, so none of these needs a lock of its own beyond the run row the commit takes. A batch's
 * rows of one kind go in one statement over arrays (unnest), whatever their number: a fixed
 * statement text, prepared once, and one round trip.
 */

/** The run's URLs that failed, by reason (a JSON object kept beside the counters); {} for a run that is gone. */
export async function errorCounts(sql: Pg, runSeq: number): Promise<Record<string, number>> {
  const row = first<{ error_counts: string }>(await sql`SELECT error_counts FROM runs WHERE seq = ${runSeq}`)
  return JSON.parse(row?.error_counts ?? '{}') as Record<string, number>
}

/**
 * New frontier rows of every group of the batch, keyed by URL: a URL another process queued
 * first stays as it is. Seqs come from the frontier's sequence in the order the engine found the
 * URLs (the engine's own numbering is for the SQLite engine, where one process holds a run). A
 * fetched redirect target (`done`) settles its URL's row if one is still waiting. The hosts of new
 * rows get their run_hosts row, which is what processes lease. Answers how far the engine's count
 * of queued rows is off: rows another process had queued, and waiting rows a redirect settled.
 */
export async function enqueue(tx: Pg, runSeq: number, groups: CrawlBatch['enqueued']): Promise<number> {
  const rows = { hashes: [] as string[], urls: [] as string[], hosts: [] as string[], depths: [] as number[], parents: [] as (string | null)[], kinds: [] as number[] }
  const done = { hashes: [] as string[], urls: [] as string[], hosts: [] as string[], depths: [] as number[], parents: [] as (string | null)[], kinds: [] as number[] }
  for (const g of groups) {
    const to = g.done ? done : rows
    for (const e of g.entries) {
      to.hashes.push(e.hash)
      to.urls.push(e.url)
      to.hosts.push(e.host)
      to.depths.push(e.depth)
      to.parents.push(e.parent)
      to.kinds.push(e.kind)
    }
  }
  let fix = 0
  if (rows.hashes.length) {
    // nextval is taken after the sort, so seqs follow the order found.
    const inserted = numeric<{ host: string }>(
      await tx`INSERT INTO frontier (run_seq, seq, hash, url, host, depth, parent, kind, state)
        SELECT ${runSeq}, nextval('frontier_seq'), x.hash, x.url, x.host, x.depth, x.parent, x.kind, ${QUEUED}::int
        FROM unnest(${tx.array(rows.hashes, 'text')}, ${tx.array(rows.urls, 'text')}, ${tx.array(rows.hosts, 'text')},
          ${tx.array(rows.depths, 'int4')}, ${tx.array(rows.parents, 'text')}, ${tx.array(rows.kinds, 'int4')}) WITH ORDINALITY AS x (hash, url, host, depth, parent, kind, ord)
        ORDER BY x.ord
        ON CONFLICT (run_seq, hash) DO NOTHING RETURNING host`,
    )
    fix -= rows.hashes.length - inserted.length
    const hosts = [...new Set(inserted.map((r) => r.host))]
    if (hosts.length) await tx`INSERT INTO run_hosts (run_seq, host) SELECT ${runSeq}, * FROM unnest(${tx.array(hosts, 'text')}) ON CONFLICT (run_seq, host) DO NOTHING`
  }
  if (done.hashes.length) {
    const settled = numeric<{ was_queued: boolean }>(
      await tx`INSERT INTO frontier AS f (run_seq, seq, hash, url, host, depth, parent, kind, state)
        SELECT ${runSeq}, nextval('frontier_seq'), x.hash, x.url, x.host, x.depth, x.parent, x.kind, ${DONE}::int
        FROM unnest(${tx.array(done.hashes, 'text')}, ${tx.array(done.urls, 'text')}, ${tx.array(done.hosts, 'text')},
          ${tx.array(done.depths, 'int4')}, ${tx.array(done.parents, 'text')}, ${tx.array(done.kinds, 'int4')}) WITH ORDINALITY AS x (hash, url, host, depth, parent, kind, ord)
        ORDER BY x.ord
        ON CONFLICT (run_seq, hash) DO UPDATE SET state = ${DONE}::int WHERE f.state = ${QUEUED}::int
        RETURNING (xmax <> 0) AS was_queued`,
    )
    fix -= settled.filter((r) => r.was_queued).length
  }
  return fix
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
  await tx`UPDATE frontier f SET state = m.state, lease_until = NULL, taken_by = NULL, attempts = f.attempts + m.attempts, not_before = coalesce(m.not_before, f.not_before)
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
