import { ValidationError } from '../../core/errors'
import { hostHash, normalizeHost } from '../../core/url'
import { storedHosts, type CrawlLogEntry, type ErrorReason, type LogFilter, type LogStatus, type LogStep, type RunRef } from '../crawl-log-types'
import type { LogPosition } from '../crawl-log-list'
import type { Page } from '../list'
import { fromVirtualKey, latencyOf, occurredAt, PAGE_STEPS, VIRTUAL_KEYS, virtualId, virtualKey, type VisitLogRow } from '../page-records'
import { epoch, formatIso } from '../time'
import { PgWhere, type Param } from './crawl-log-where'
import { numbered } from './list'
import { VISIT_LOG_COLUMNS, type PgEnvelopes } from './page-records'
import { first, numeric, type Pg } from './pg'

const COLUMNS = 't.id, t.url, t.url_hash, t.host, t.step, t.status, t.pipeline_id, t.error_reason, t.error_detail, t.http_status, t.latency_ms, t.depth, t.parent_url_hash, t.occurred_at'
type Row = {
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

/** An entry as the API shows it, fields in the SQLite engine's order (crawl-log-list.ts). */
function toEntry(r: Row, run: RunRef): CrawlLogEntry {
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
 * The statement of one page of a run's crawl_logs rows, newest first by (occurred_at, seq). The
 * SQLite engine names the index that drives it; PostgreSQL's planner picks among the same
 * indexes by their statistics, and the partial indexes' own conditions are stated so it can use
 * them (crawl_logs_errors for error reasons, crawl_logs_not_ok for statuses without `ok`).
 */
export function listStatement(runSeq: number, f: LogFilter, after: LogPosition | undefined, perPage: number): { text: string; params: Param[] } {
  const w = new PgWhere().add('t.run_seq = ?::int8', runSeq)
  if (f.error_reasons !== undefined) w.add('t.error_reason IS NOT NULL')
  else if (f.statuses !== undefined && !f.statuses.includes('ok')) w.add("t.status <> 'ok'")
  w.in('error_reason', f.error_reasons).in('status', f.statuses).in('host', storedHosts(f.hosts))
  w.in('step', f.steps).in('pipeline_id', f.pipeline_ids).range(f)
  // A virtual entry's key is above every seq: at its instant, every row comes after it.
  if (after) w.add('t.occurred_at <= ?::int8 AND (t.occurred_at < ?::int8 OR t.seq < ?::int8)', after.occurred_at, after.occurred_at, after.seq)
  return {
    text: numbered(`SELECT t.seq AS _seq, ${COLUMNS} FROM crawl_logs t WHERE ${w.sql} ORDER BY t.occurred_at DESC, t.seq DESC LIMIT ?::int8`),
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

/** The statement that walks a run's visit rows newest first, below `end` and from `first` (visits_by_run), keeping those with an entry the filters admit. */
export function visitWalkStatement(runSeq: number, f: LogFilter, mask: number, firstSeq: number, end: number, limit: number): { text: string; params: Param[] } {
  const w = new PgWhere('v').add('v.run_seq = ?::int8 AND v.seq >= ?::int8 AND v.seq < ?::int8 AND (v.logged & ?::int) <> 0', runSeq, firstSeq, end, mask)
  w.in(
    'host_hash',
    f.hosts?.map((h) => hostHash(normalizeHost(h) ?? h)),
  ).in('pipeline_id', f.pipeline_ids)
  return { text: numbered(`SELECT ${VISIT_LOG_COLUMNS} FROM visits v WHERE ${w.sql} ORDER BY v.seq DESC LIMIT ?::int8`), params: [...w.params, limit] }
}

type Candidate = { at: number; key: number; row?: Row; visit?: VisitLogRow; step?: number }
const newestFirst = (a: Candidate, b: Candidate) => b.at - a.at || b.key - a.key
/** Visits read per statement of the walk, growing while a page is not settled. */
const CHUNKS = [64, 256, 1024, 4096]

/**
 * A page of a run's entries, newest first: its crawl_logs rows and the entries its visit rows
 * stand for, merged, exactly as the SQLite engine's crawlLogList (crawl-log-list.ts) pages them:
 * the rows from listStatement, the visit rows by a walk of the run's visits newest first within
 * the seqs its envelope allows, the same keys (a row's seq, or virtualKey(visit seq, step)).
 * `db` is the caller's read transaction, so every statement of a page sees one snapshot.
 */
export function pgCrawlLogList(visits: PgEnvelopes) {
  /** Where the page after `key` starts; a key of no entry of this run is a 422 on page. */
  const positionAfter = async (db: Pg, run: RunRef, key: number): Promise<LogPosition> => {
    if (key < VIRTUAL_KEYS) {
      const at = first<LogPosition>(await db`SELECT occurred_at, seq FROM crawl_logs WHERE seq = ${key}::int8 AND run_seq = ${run.seq}::int8`)
      if (at) return at
    } else {
      const { visitSeq, step } = fromVirtualKey(key)
      const v = first<VisitLogRow>(await db.unsafe(`SELECT ${VISIT_LOG_COLUMNS} FROM visits v WHERE v.seq = $1::int8 AND v.run_seq = $2::int8`, [visitSeq, run.seq]))
      if (v && v.logged & (1 << step)) return { occurred_at: occurredAt(v, step), seq: key }
    }
    throw ValidationError.of('page', 'is not a cursor of this run')
  }

  /** The entries of the visits walked that the filters and the page admit, with the candidates so far, newest first, at most `wanted`. */
  const walk = async (db: Pg, run: RunRef, f: LogFilter, after: LogPosition | undefined, found: Candidate[], wanted: number): Promise<Candidate[]> => {
    const mask = visitStepMask(f)
    const e = mask ? await visits.of(db, run.seq, run.key) : null
    if (!e) return found
    const from = f.occurred_after === undefined ? undefined : epoch(f.occurred_after) + 1
    const below = Math.min(f.occurred_before === undefined ? Infinity : epoch(f.occurred_before), after === undefined ? Infinity : after.occurred_at + 1)
    const seqs = await visits.seqRange(db, run.seq, e, from, below === Infinity ? undefined : below)
    if (!seqs) return found
    let { first: firstSeq, end } = seqs
    let settledAt = -Infinity
    for (let round = 0; end > firstSeq; round++) {
      if (found.length >= wanted && found[wanted - 1]!.at > settledAt) {
        // Entries older than the last candidate cannot make the page: neither can visits whose entries all are.
        settledAt = found[wanted - 1]!.at
        const above = await visits.seqRange(db, run.seq, e, Math.max(settledAt, from ?? -Infinity), undefined)
        if (!above) break
        firstSeq = Math.max(firstSeq, above.first)
        if (end <= firstSeq) break
      }
      const limit = CHUNKS[Math.min(round, CHUNKS.length - 1)]!
      const built = visitWalkStatement(run.seq, f, mask, firstSeq, end, limit)
      const rows = numeric<VisitLogRow>(await db.unsafe(built.text, built.params as unknown[]))
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

  return async function list(db: Pg, run: RunRef, f: LogFilter, afterKey: number | undefined, perPage: number): Promise<Page<CrawlLogEntry>> {
    const after = afterKey === undefined ? undefined : await positionAfter(db, run, afterKey)
    const wanted = perPage + 1
    const built = listStatement(run.seq, f, after, perPage)
    const rows = numeric<Row & { _seq: number }>(await db.unsafe(built.text, built.params as unknown[]))
    const found = await walk(
      db,
      run,
      f,
      after,
      rows.map((row) => ({ at: row.occurred_at, key: row._seq, row })),
      wanted,
    )
    const page = found.slice(0, perPage)
    const hashes = [...new Set(page.flatMap((c) => (c.visit ? [c.visit.hash] : [])))]
    const links = new Map<string, { url: string; domain: string }>()
    if (hashes.length) {
      const found = numeric<{ hash: string; url: string; domain: string }>(
        await db`SELECT l.hash, l.url, h.domain FROM links l JOIN hosts h ON h.seq = l.host_seq WHERE l.tenant = ${run.tenant} AND l.hash = ANY(${db.array(hashes, 'TEXT')}::text[])`,
      )
      for (const l of found) links.set(l.hash, l)
    }
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
