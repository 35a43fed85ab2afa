import { hasEmptyList, LOG_STATUSES, LOG_STEPS, type ErrorReason, type LogEntry, type LogStep, type RunRef } from '../crawl-log-types'
import { emptyPage } from '../list'
import { occurredAt, PAGE_STEPS, type Envelope, type VisitLogRow } from '../page-records'
import type { CrawlLogStore, FailedUrl, RunGraphStore } from '../types'
import { pgCrawlLogAggregates } from './crawl-log-aggregates'
import { pgCrawlLogList } from './crawl-log-list'
import { runSeqOf } from './keys'
import { pgEnvelopes, VISIT_LOG_COLUMNS } from './page-records'
import { first, numeric, type Pg } from './pg'
import { runEdgesPage } from './run-edges'
import { runVisits } from './run-graph'

export { recordPages } from './page-records'

const STEP_SET: ReadonlySet<string> = new Set(LOG_STEPS)
const STATUS_SET: ReadonlySet<string> = new Set(LOG_STATUSES)
/** Entries per INSERT: the statement sends fifteen arrays, whatever their length. */
const ENTRIES_PER_STATEMENT = 5000

/**
 * Writes crawl log entries inside the caller's transaction, as the SQLite engine's LogWriter
 * flushes them (crawl-log-writer.ts): each gets a random (v4) id, its time truncated to the
 * millisecond, seqs in the order given; an impossible entry is a TypeError before anything is
 * written; entries of a run deleted meanwhile are dropped, the rest written.
 *
 * The runs are read FOR KEY SHARE first: a run that is there stays there until the caller
 * commits (its deletion waits), and one deleted already is left out, so the foreign key never
 * fails the caller's transaction. Without a transaction (`tx` the pool) that lock ends at once.
 */
export async function writeLogs(tx: Pg, entries: readonly LogEntry[]): Promise<void> {
  for (const e of entries) {
    // A bad row would fail its whole batch; refuse it here instead.
    if (!STEP_SET.has(e.step) || !STATUS_SET.has(e.status) || !Number.isFinite(e.occurred_at)) {
      throw new TypeError(`bad crawl log entry: step=${e.step} status=${e.status} occurred_at=${e.occurred_at}`)
    }
  }
  if (!entries.length) return
  const seqs = [...new Set(entries.map((e) => e.run_seq))]
  const live = new Set(numeric<{ seq: number }>(await tx`SELECT seq FROM runs WHERE seq = ANY(${tx.array(seqs, 'BIGINT')}::int8[]) ORDER BY seq FOR KEY SHARE`).map((r) => r.seq))
  const kept = live.size === seqs.length ? entries : entries.filter((e) => live.has(e.run_seq))
  for (let i = 0; i < kept.length; i += ENTRIES_PER_STATEMENT) await insertChunk(tx, kept.slice(i, i + ENTRIES_PER_STATEMENT))
}

/** One INSERT of entries as column arrays: one statement text whatever their number, so one prepared plan; seqs in their order. */
async function insertChunk(tx: Pg, chunk: readonly LogEntry[]): Promise<void> {
  const column = (type: 'TEXT' | 'INT' | 'BIGINT' | 'DOUBLE PRECISION') => (get: (e: LogEntry) => string | number | undefined) =>
    tx.array(
      chunk.map((e) => get(e) ?? null),
      type,
    )
  const [text, int, int8, float8] = [column('TEXT'), column('INT'), column('BIGINT'), column('DOUBLE PRECISION')]
  await tx`
    INSERT INTO crawl_logs (run_seq, id, url, url_hash, host, step, status, pipeline_id, error_reason, error_detail, http_status, latency_ms, depth, parent_url_hash, occurred_at)
    SELECT u.run_seq, u.id, u.url, u.url_hash, u.host, u.step, u.status, u.pipeline_id, u.error_reason, u.error_detail, u.http_status, u.latency_ms, u.depth, u.parent_url_hash, u.occurred_at
    FROM unnest(
      ${int8((e) => e.run_seq)}::int8[], ${text(() => crypto.randomUUID())}::text[], ${text((e) => e.url)}::text[], ${text((e) => e.url_hash)}::text[],
      ${text((e) => e.host)}::text[], ${text((e) => e.step)}::text[], ${text((e) => e.status)}::text[], ${text((e) => e.pipeline_id)}::text[],
      ${text((e) => e.error_reason)}::text[], ${text((e) => e.error_detail)}::text[], ${int((e) => e.http_status)}::int[], ${float8((e) => e.latency_ms)}::float8[],
      ${int((e) => e.depth)}::int[], ${text((e) => e.parent_url_hash)}::text[], ${int8((e) => Math.trunc(e.occurred_at))}::int8[]
    ) WITH ORDINALITY AS u (run_seq, id, url, url_hash, host, step, status, pipeline_id, error_reason, error_detail, http_status, latency_ms, depth, parent_url_hash, occurred_at, ord)
    ORDER BY u.ord`
}

/**
 * Whether the run has an entry of this URL and step at or after `since` (epoch ms): a fetch the
 * journal still lists whose entry was committed just before a crash. Looks at the URL's visit
 * row, which may stand for the entry, then at the run's rows since then (crawl_logs_by_time).
 */
export async function loggedSince(sql: Pg, runSeq: number, urlHash: string, step: string, since: number): Promise<boolean> {
  const i = (PAGE_STEPS as readonly string[]).indexOf(step)
  if (i >= 0) {
    // By the link's seq (visits_once): the hash names the run tenant's link.
    const v = first<VisitLogRow>(
      await sql.unsafe(
        `SELECT ${VISIT_LOG_COLUMNS} FROM visits v WHERE v.run_seq = $1::int8
           AND v.link_seq = (SELECT l.seq FROM links l WHERE l.tenant = (SELECT r.tenant FROM runs r WHERE r.seq = $1::int8) AND l.hash = $2)`,
        [runSeq, urlHash],
      ),
    )
    if (v && v.logged & (1 << i) && occurredAt(v, i) >= since) return true
  }
  // Math.trunc: the SQLite engine binds `since` as CAST(? AS INTEGER).
  const rows = await sql`SELECT 1 AS one FROM crawl_logs WHERE run_seq = ${runSeq}::int8 AND occurred_at >= ${Math.trunc(since)}::int8 AND url_hash = ${urlHash} AND step = ${step} LIMIT 1`
  return rows.length > 0
}

/**
 * The crawl log as read on PostgreSQL (the SQLite engine's crawlLogRepository and its
 * wrapper): a run's crawl_logs rows and the ok entries its visit rows stand for, one log to
 * every read. A read runs in one REPEATABLE READ, READ ONLY transaction, so its statements see
 * one snapshot (the visits its bounds came from), as the SQLite engine's reads see one state
 * inside their BEGIN; its first statement finds the run and grows the run's envelope.
 */
export function pgCrawlLogStore(sql: Pg): CrawlLogStore {
  const envelopes = pgEnvelopes()
  const list = pgCrawlLogList()
  const aggregates = pgCrawlLogAggregates()
  /** `fn` of the tenant's run and its envelope, in one snapshot; null when the tenant has no such run. */
  const reading = <T>(tenant: string, runId: string, fn: (tx: Pg, run: RunRef, e: Envelope | null) => Promise<T>): Promise<T | null> =>
    sql.begin('ISOLATION LEVEL REPEATABLE READ READ ONLY', async (tx) => {
      const opened = await envelopes.open(tx, tenant, runId)
      return opened && fn(tx, opened.run, opened.envelope)
    }) as Promise<T | null>

  return {
    list: (tenant, runId, f, after, perPage) => reading(tenant, runId, async (tx, run, e) => (hasEmptyList(f) ? emptyPage() : list(tx, run, e, f, after, perPage))),
    metrics: (tenant, runId, q) => reading(tenant, runId, (tx, run, e) => aggregates.metrics(tx, run, e, q)),
    latency: (tenant, runId, q) => reading(tenant, runId, (tx, run, e) => aggregates.latency(tx, run, e, q)),
    /**
     * Why each of these URLs failed in the run (at most a few hundred link hashes): the last
     * error entry at or before `upTo`, a fetch step's before any other step's. URLs without an
     * error entry are absent. (Visit rows stand for ok entries only.)
     */
    async errorsOf(tenant, runId, urlHashes, upTo) {
      const found = new Map<string, FailedUrl>()
      const seq = await runSeqOf(sql, tenant, runId)
      if (seq === null || !urlHashes.length) return found
      // The partial errors index walks only the run's error entries, which a healthy run has few of.
      const rows = numeric<{ url_hash: string; step: LogStep; error_reason: ErrorReason; error_detail: string | null }>(
        await sql`SELECT url_hash, step, error_reason, error_detail FROM crawl_logs
          WHERE run_seq = ${seq}::int8 AND error_reason IS NOT NULL AND occurred_at <= ${Math.trunc(upTo)}::int8 AND url_hash = ANY(${sql.array([...urlHashes], 'TEXT')}::text[])
          ORDER BY seq`,
      )
      // URLs whose entry found so far is a fetch step's: a later entry of another step does not replace it.
      const byFetch = new Set<string>()
      for (const r of rows) {
        if (r.step === 'fetch') byFetch.add(r.url_hash)
        else if (byFetch.has(r.url_hash)) continue
        found.set(r.url_hash, { reason: r.error_reason, detail: r.error_detail })
      }
      return found
    },
  }
}

/** A run's link graph as read on PostgreSQL (run-graph.ts and run-edges.ts); null when the tenant has no such run. */
export function pgRunGraphStore(sql: Pg): RunGraphStore {
  return {
    async visits(tenant, runId, f, after, perPage) {
      const seq = await runSeqOf(sql, tenant, runId)
      return seq === null ? null : runVisits(sql, tenant, seq, f, after, perPage)
    },
    async edges(tenant, runId, f, after, perPage) {
      const seq = await runSeqOf(sql, tenant, runId)
      return seq === null ? null : runEdgesPage(sql, tenant, seq, f, after, perPage)
    },
  }
}
