import type { Database, SQLQueryBindings } from 'bun:sqlite'
import { ValidationError } from '../core/errors'
import { hostHash, normalizeHost } from '../core/url'
import { storedHosts, Where, type CrawlLogEntry, type ErrorReason, type LogFilter, type LogStatus, type LogStep, type RunRef } from './crawl-log-types'
import { INT, TEXT, type Page } from './list'
import { fromVirtualKey, occurredAt, latencyOf, PAGE_STEPS, VIRTUAL_KEYS, virtualId, virtualKey, VISIT_LOG_COLUMNS, type envelopes, type VisitLogRow } from './page-records'
import { epoch, formatIso } from './time'

/** The keyset position after which a page starts: the last entry of the previous page (`seq`: its list key). */
export type LogPosition = { occurred_at: number; seq: number }

export const LOG_COLUMNS = 't.id, t.url, t.url_hash, t.host, t.step, t.status, t.pipeline_id, t.error_reason, t.error_detail, t.http_status, t.latency_ms, t.depth, t.parent_url_hash, t.occurred_at'
export type LogRow = {
  id: string
  url: string
  url_hash: string
  host: string
  step: LogStep
  status: LogStatus
  pipeline_id: string | null
  error_reason: ErrorReason | null
  error_detail: string | null
  http_status: number | null
  latency_ms: number | null
  depth: number | null
  parent_url_hash: string | null
  occurred_at: number
}

export function toEntry(r: LogRow, run: RunRef): CrawlLogEntry {
  // occurred_at is set last so it also comes last in the JSON, after the optional fields.
  const e = { id: r.id, run_id: run.id, job_id: run.job_id, url: r.url, url_hash: r.url_hash, host: r.host, step: r.step, status: r.status } as CrawlLogEntry
  if (r.pipeline_id !== null) e.pipeline_id = r.pipeline_id
  if (r.error_reason !== null) e.error_reason = r.error_reason
  if (r.error_detail !== null) e.error_detail = r.error_detail
  if (r.http_status !== null) e.http_status = r.http_status
  if (r.latency_ms !== null) e.latency_ms = r.latency_ms
  if (r.depth !== null) e.depth = r.depth
  if (r.parent_url_hash !== null) e.parent_url_hash = r.parent_url_hash
  e.occurred_at = formatIso(r.occurred_at)
  return e
}

/**
 * The statement of one page of a run's crawl_logs rows, newest first by (occurred_at, seq). It
 * names the index that drives it (INDEXED BY: the plan cannot drift with table statistics),
 * chosen so the rows it walks are mostly rows it returns:
 * - error_reasons: the partial index of entries that have one (errors are few);
 * - statuses without `ok`: the partial index of non-ok entries;
 * - hosts: the host index;
 * - otherwise the run's time index; steps, statuses and pipeline_ids are tested on the way
 *   (few distinct values, so matches are dense).
 * One value of the driving filter is an ordered walk from the cursor, O(log n + page). Several
 * values are looked up and sorted: O(their entries), which is small for errors and non-ok
 * outcomes but is all of those hosts' entries for several hosts.
 * Exported so tests can EXPLAIN it.
 */
export function listStatement(runSeq: number, f: LogFilter, after: LogPosition | undefined, perPage: number): { sql: string; params: SQLQueryBindings[] } {
  const w = new Where().add(`t.run_seq = ${INT}`, runSeq)
  let index = 'crawl_logs_by_time'
  if (f.error_reasons !== undefined) {
    index = 'crawl_logs_errors'
    w.add('t.error_reason IS NOT NULL') // the partial index's own condition, for the planner
  } else if (f.statuses !== undefined && !f.statuses.includes('ok')) {
    index = 'crawl_logs_not_ok'
    w.add("t.status <> 'ok'")
  } else if (f.hosts !== undefined) {
    index = 'crawl_logs_by_host'
  }
  w.in('error_reason', f.error_reasons).in('status', f.statuses).in('host', storedHosts(f.hosts))
  w.in('step', f.steps).in('pipeline_id', f.pipeline_ids).range(f)
  // A virtual entry's key is above every seq: at its instant, every row comes after it.
  if (after) w.add(`t.occurred_at <= ${INT} AND (t.occurred_at < ${INT} OR t.seq < ${INT})`, after.occurred_at, after.occurred_at, after.seq)
  return {
    sql: `SELECT t.seq AS _seq, ${LOG_COLUMNS} FROM crawl_logs t INDEXED BY ${index} WHERE ${w.sql} ORDER BY t.occurred_at DESC, t.seq DESC LIMIT ${INT}`,
    params: [...w.params, perPage + 1],
  }
}

/** Which of a visit row's entries the filters admit, as `logged` bits; 0 when none can match. */
function visitStepMask(f: LogFilter): number {
  if (f.error_reasons !== undefined) return 0
  if (f.statuses !== undefined && !f.statuses.includes('ok')) return 0
  let mask = 15
  if (f.steps !== undefined) mask = PAGE_STEPS.reduce((m, s, i) => (f.steps!.includes(s) ? m | (1 << i) : m), 0)
  if (f.pipeline_ids !== undefined) mask &= 2
  return mask
}

/**
 * The statement that walks a run's visit rows newest first, below `end` and from `first`
 * (visits_by_run), keeping those with an entry the filters admit. Exported so tests can EXPLAIN it.
 */
export function visitWalkStatement(runSeq: number, f: LogFilter, mask: number, first: number, end: number, limit: number): { sql: string; params: SQLQueryBindings[] } {
  const w = new Where('v').add(`v.run_seq = ${INT} AND v.seq >= ${INT} AND v.seq < ${INT} AND (v.logged & ${INT}) <> 0`, runSeq, first, end, mask)
  w.in(
    'host_hash',
    f.hosts?.map((h) => hostHash(normalizeHost(h) ?? h)),
  ).in('pipeline_id', f.pipeline_ids)
  return { sql: `SELECT ${VISIT_LOG_COLUMNS} FROM visits v WHERE ${w.sql} ORDER BY v.seq DESC LIMIT ${INT}`, params: [...w.params, limit] }
}

type Candidate = { at: number; key: number; row?: LogRow; visit?: VisitLogRow; step?: number }
const newestFirst = (a: Candidate, b: Candidate) => b.at - a.at || b.key - a.key
/** Visits read per statement of the walk, growing while a page is not settled. */
const CHUNKS = [64, 256, 1024, 4096]

/**
 * A page of a run's entries, newest first: its crawl_logs rows and the entries its visit rows
 * stand for, merged. The rows come from listStatement (perPage + 1 of them); the visit rows by a
 * walk of the run's visits newest first, within the seqs that can hold entries in the page's
 * time range (the run's envelope, page-records.ts) and, once perPage + 1 candidates are known,
 * above the seqs whose entries are all older than the last of them. Nothing is sorted but the
 * candidates. Keys: a row's seq, or virtualKey(visit seq, step).
 */
export function crawlLogList(db: Database, visits: ReturnType<typeof envelopes>) {
  const positionOf = db.query(`SELECT occurred_at, seq FROM crawl_logs WHERE seq = ${INT} AND run_seq = ${INT}`)
  const visitOf = db.query(`SELECT ${VISIT_LOG_COLUMNS} FROM visits v WHERE v.seq = ${INT} AND v.run_seq = ${INT}`)
  const linksOf = db.query(`SELECT l.hash, l.url, h.domain FROM links l JOIN hosts h ON h.seq = l.host_seq WHERE l.tenant = ${TEXT} AND l.hash IN (SELECT value FROM json_each(${TEXT}))`)

  /** Where the page after `key` starts; a key of no entry of this run is a 422 on page. */
  const positionAfter = (run: RunRef, key: number): LogPosition => {
    if (key < VIRTUAL_KEYS) {
      const at = positionOf.get(key, run.seq) as LogPosition | null
      if (at) return at
    } else {
      const { visitSeq, step } = fromVirtualKey(key)
      const v = visitOf.get(visitSeq, run.seq) as VisitLogRow | null
      if (v && v.logged & (1 << step)) return { occurred_at: occurredAt(v, step), seq: key }
    }
    throw ValidationError.of('page', 'is not a cursor of this run')
  }

  /** The entries of the visits walked that the filters and the page admit, with the candidates so far, newest first, at most `wanted`. */
  const walk = (run: RunRef, f: LogFilter, after: LogPosition | undefined, found: Candidate[], wanted: number): Candidate[] => {
    const mask = visitStepMask(f)
    const e = mask ? visits.of(run.seq, run.key) : null
    if (!e) return found
    const from = f.occurred_after === undefined ? undefined : epoch(f.occurred_after) + 1
    const below = Math.min(f.occurred_before === undefined ? Infinity : epoch(f.occurred_before), after === undefined ? Infinity : after.occurred_at + 1)
    const seqs = visits.seqRange(run.seq, e, from, below === Infinity ? undefined : below)
    if (!seqs) return found
    let { first, end } = seqs
    let settledAt = -Infinity
    for (let round = 0; end > first; round++) {
      if (found.length >= wanted && found[wanted - 1]!.at > settledAt) {
        // Entries older than the last candidate cannot make the page: neither can visits whose entries all are.
        settledAt = found[wanted - 1]!.at
        const above = visits.seqRange(run.seq, e, Math.max(settledAt, from ?? -Infinity), undefined)
        if (!above) break
        first = Math.max(first, above.first)
        if (end <= first) break
      }
      const limit = CHUNKS[Math.min(round, CHUNKS.length - 1)]!
      const built = visitWalkStatement(run.seq, f, mask, first, end, limit)
      const rows = db.query(built.sql).all(...built.params) as VisitLogRow[]
      for (const v of rows) {
        for (let step = 0; step < 4; step++) {
          if (!(v.logged & mask & (1 << step))) continue
          const at = occurredAt(v, step)
          if ((from !== undefined && at < from) || at >= below) continue
          const key = virtualKey(v.seq, step)
          if (after && at === after.occurred_at && key >= after.seq) continue
          found.push({ at, key, visit: v, step })
        }
      }
      found.sort(newestFirst)
      if (found.length > wanted) found.length = wanted
      if (rows.length < limit) break
      end = rows[rows.length - 1]!.seq
    }
    return found
  }

  return function list(run: RunRef, f: LogFilter, afterKey: number | undefined, perPage: number): Page<CrawlLogEntry> {
    const after = afterKey === undefined ? undefined : positionAfter(run, afterKey)
    const wanted = perPage + 1
    const built = listStatement(run.seq, f, after, perPage)
    const rows = db.query(built.sql).all(...built.params) as (LogRow & { _seq: number })[]
    const found = walk(
      run,
      f,
      after,
      rows.map((row) => ({ at: row.occurred_at, key: row._seq, row })),
      wanted,
    )
    const page = found.slice(0, perPage)
    const hashes = [...new Set(page.flatMap((c) => (c.visit ? [c.visit.hash] : [])))]
    const links = new Map<string, { url: string; domain: string }>()
    if (hashes.length) for (const l of linksOf.all(run.tenant, JSON.stringify(hashes)) as { hash: string; url: string; domain: string }[]) links.set(l.hash, l)
    const data: CrawlLogEntry[] = []
    for (const c of page) {
      if (c.row) {
        data.push(toEntry(c.row, run))
        continue
      }
      const v = c.visit!
      const step = c.step!
      const link = links.get(v.hash)
      // The engine writes a page's link before its record; one missing leaves nothing to show.
      if (!link) continue
      data.push(
        toEntry(
          {
            id: virtualId(v.seq, step),
            url: link.url,
            url_hash: v.hash,
            host: link.domain,
            step: PAGE_STEPS[step]!,
            status: 'ok',
            pipeline_id: step === 1 ? v.pipeline_id : null,
            error_reason: null,
            error_detail: null,
            http_status: step === 0 ? v.status : null,
            latency_ms: latencyOf(v, step),
            depth: v.depth,
            parent_url_hash: v.parent,
            occurred_at: c.at,
          },
          run,
        ),
      )
    }
    return { data, next: found.length > perPage ? page[page.length - 1]!.key : null }
  }
}
