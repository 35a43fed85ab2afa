import { ValidationError } from '../../core/errors'
import { hostHash, normalizeHost } from '../../core/url'
import { storedHosts, type CrawlLogEntry, type LogFilter, type RunRef } from '../crawl-log-types'
import { LOG_COLUMNS, toEntry, type LogPosition, type LogRow } from '../crawl-log-list'
import type { Page } from '../list'
import { fromVirtualKey, latencyOf, occurredAt, PAGE_STEPS, VIRTUAL_KEYS, virtualId, virtualKey, type Envelope, type VisitLogRow } from '../page-records'
import { epoch } from '../time'
import { PgWhere, type Param } from './crawl-log-where'
import { numbered } from './list'
import { CUT_SQL, occurredAtSql, VISIT_LOG_COLUMNS } from './page-records'
import { numeric, type Pg } from './pg'

/**
 * The statement of one page of a run's crawl_logs rows, newest first by (occurred_at, seq). The
 * SQLite engine names the index that drives it; PostgreSQL's planner picks among the same
 * indexes by their statistics, and the partial indexes' own conditions are stated so it can use
 * them (crawl_logs_errors for error reasons, crawl_logs_not_ok for statuses without `ok`).
 *
 * After a key, the page starts after that entry's position, found in the same statement (one
 * round trip): a row's by its seq, an entry a visit stands for by its visit and step. The
 * statement answers the position (`_at`, `_k`) on every row, and one row without an entry when
 * no row follows it; none when the key is no entry of this run.
 */
export function listStatement(runSeq: number, f: LogFilter, afterKey: number | undefined, perPage: number): { text: string; params: Param[] } {
  const w = new PgWhere().add('t.run_seq = ?::int8', runSeq)
  if (f.error_reasons !== undefined) w.add('t.error_reason IS NOT NULL')
  else if (f.statuses !== undefined && !f.statuses.includes('ok')) w.add("t.status <> 'ok'")
  w.in('error_reason', f.error_reasons).in('status', f.statuses).in('host', storedHosts(f.hosts))
  w.in('step', f.steps).in('pipeline_id', f.pipeline_ids).range(f)
  if (afterKey === undefined) {
    return {
      text: numbered(`SELECT t.seq AS _seq, ${LOG_COLUMNS} FROM crawl_logs t WHERE ${w.sql} ORDER BY t.occurred_at DESC, t.seq DESC LIMIT ?::int8`),
      params: [...w.params, perPage + 1],
    }
  }
  // A virtual entry's key is above every seq: at its instant, every row comes after it.
  w.add('t.occurred_at <= p._at AND (t.occurred_at < p._at OR t.seq < p._k)')
  let position: string
  let params: Param[]
  if (afterKey < VIRTUAL_KEYS) {
    position = 'SELECT occurred_at AS _at, seq AS _k FROM crawl_logs WHERE seq = ?::int8 AND run_seq = ?::int8'
    params = [afterKey, runSeq]
  } else {
    const { visitSeq, step } = fromVirtualKey(afterKey)
    // Its time as the list computes it in JS (occurredAt), so that the walk meets it exactly.
    position = `SELECT ${occurredAtSql(String(step), 'js')} AS _at, ?::int8 AS _k FROM visits v WHERE v.seq = ?::int8 AND v.run_seq = ?::int8 AND (v.logged & ?::int) <> 0`
    params = [afterKey, visitSeq, runSeq, 1 << step]
  }
  return {
    text: numbered(
      `SELECT p._at, p._k, r.* FROM (${position}) p LEFT JOIN LATERAL (SELECT t.seq AS _seq, ${LOG_COLUMNS} FROM crawl_logs t WHERE ${w.sql} ORDER BY t.occurred_at DESC, t.seq DESC LIMIT ?::int8) r ON true`,
    ),
    params: [...params, ...w.params, perPage + 1],
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
 * The statement that walks a run's visit rows newest first from below `end` (visits_by_run),
 * keeping those with an entry the filters admit. Given `belowAt`, the walk starts below the cut
 * of that time too (CUT_SQL, found in the same statement): the visits from there on hold only
 * entries at or after the page's end, which a deep page must not read.
 */
export function visitWalkStatement(runSeq: number, f: LogFilter, mask: number, end: number, belowAt: number | undefined, limit: number): { text: string; params: Param[] } {
  const w = new PgWhere('v').add('v.run_seq = ?::int8', runSeq)
  if (belowAt === undefined) w.add('v.seq < ?::int8', end)
  else w.add(`v.seq < least(?::int8, coalesce(${CUT_SQL}, ${Number.MAX_SAFE_INTEGER}::int8))`, end, runSeq, belowAt)
  w.add('(v.logged & ?::int) <> 0', mask)
  w.in(
    'host_hash',
    f.hosts?.map((h) => hostHash(normalizeHost(h) ?? h)),
  ).in('pipeline_id', f.pipeline_ids)
  return { text: numbered(`SELECT ${VISIT_LOG_COLUMNS} FROM visits v WHERE ${w.sql} ORDER BY v.run_seq DESC, v.seq DESC LIMIT ?::int8`), params: [...w.params, limit] }
}

type Candidate = { at: number; key: number; row?: LogRow; visit?: VisitLogRow; step?: number }
const newestFirst = (a: Candidate, b: Candidate) => b.at - a.at || b.key - a.key
/** Visits read per statement of the walk, growing while a page is not settled. */
const CHUNKS = [64, 256, 1024, 4096]

/**
 * A page of a run's entries, newest first: its crawl_logs rows and the entries its visit rows
 * stand for, merged, with the SQLite engine's answer (crawl-log-list.ts): the same entries in the
 * same order, the same keys (a row's seq, or virtualKey(visit seq, step)). The rows come from
 * listStatement (perPage + 1 of them); the visit rows by a walk of the run's visits newest first
 * from below the seqs whose entries are all at or after the page's end (a cut of the run's
 * envelope), in growing chunks, until the visits left can hold no entry the page could take.
 *
 * The SQLite engine knows that last by more cuts (a binary search each), from the page's start
 * and at each better candidate; here a round trip each, so the walk reads it off the oldest
 * visit it has read instead, with the envelope's own bounds: every visit before visit v holds
 * entries at most v.visited_at + disorder + after (its visited_at at most the running max at v,
 * which is at most v.visited_at + disorder). Both skip only visits that cannot change the page,
 * so both answer the same page; a page is usually one statement of visits.
 * `db` is the caller's read transaction, so every statement of a page sees one snapshot.
 */
export function pgCrawlLogList() {
  /** The entries of the visits walked that the filters and the page admit, with the candidates so far, newest first, at most `wanted`. */
  const walk = async (db: Pg, run: RunRef, e: Envelope | null, f: LogFilter, after: LogPosition | undefined, found: Candidate[], wanted: number): Promise<Candidate[]> => {
    const mask = visitStepMask(f)
    if (!mask || !e) return found
    const from = f.occurred_after === undefined ? undefined : epoch(f.occurred_after) + 1
    const below = Math.min(f.occurred_before === undefined ? Infinity : epoch(f.occurred_before), after === undefined ? Infinity : after.occurred_at + 1)
    let belowAt = below === Infinity ? undefined : below + e.disorder + e.before
    let end = Number.MAX_SAFE_INTEGER
    for (let round = 0; ; round++) {
      const limit = CHUNKS[Math.min(round, CHUNKS.length - 1)]!
      const built = visitWalkStatement(run.seq, f, mask, end, belowAt, limit)
      belowAt = undefined
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
      const oldest = rows[rows.length - 1]!
      // The earliest time an entry of the page may have: the range's start, and once the page
      // is full, its last candidate's (an entry of that instant may still come before it).
      const needed = Math.max(from ?? -Infinity, found.length >= wanted ? found[wanted - 1]!.at : -Infinity)
      if (oldest.visited_at + e.disorder + e.after < needed) break
      end = oldest.seq
    }
    return found
  }

  return async function list(db: Pg, run: RunRef, e: Envelope | null, f: LogFilter, afterKey: number | undefined, perPage: number): Promise<Page<CrawlLogEntry>> {
    const wanted = perPage + 1
    const built = listStatement(run.seq, f, afterKey, perPage)
    let rows = numeric<LogRow & { _seq: number | null; _at?: number; _k?: number }>(await db.unsafe(built.text, built.params as unknown[]))
    let after: LogPosition | undefined
    if (afterKey !== undefined) {
      // A key of no entry of this run is a 422 on page.
      if (!rows.length) throw ValidationError.of('page', 'is not a cursor of this run')
      after = { occurred_at: rows[0]!._at!, seq: rows[0]!._k! }
      if (rows[0]!._seq === null) rows = []
    }
    const found = await walk(
      db,
      run,
      e,
      f,
      after,
      rows.map((row) => ({ at: row.occurred_at, key: row._seq!, row })),
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
