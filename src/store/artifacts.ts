import type { Database } from 'bun:sqlite'
import { multiRowWriter } from './multi-row'
import { mimeEssence } from '../parse/document'
import { ListQuery, TEXT, type Page } from './list'
import { iso } from './time'

export const ARTIFACT_KINDS = ['raw', 'parsed', 'asset'] as const
export type ArtifactKind = (typeof ARTIFACT_KINDS)[number]

/** The API shape (docs/api.md, "Artifact"); `size` is the blob's length in bytes. */
export type Artifact = {
  id: string
  run_id: string
  /** The URL of `url_hash`, from the link catalogue when read (the engine stores only the hash). */
  url: string | null
  url_hash: string
  blob_key: string
  kind: ArtifactKind
  pipeline_id: string | null
  content_type: string
  size: number
  created_at: string
}

/** A row as read: the API shape with its time as stored (epoch milliseconds). */
export type ArtifactRow = Omit<Artifact, 'created_at'> & { created_at: number }

/**
 * What the engine records once the blob is stored (`size` and `checksum` from the put).
 * `source_url`: set on a parsed artifact kept as its page's raw body (blob_key is the raw
 * artifact's, `size` the parsed JSON's length, `checksum` the body's): the content is made again
 * from that body when read, at this base URL (decision 103). Absent for stored content.
 */
export type NewArtifact = Omit<ArtifactRow, 'url'> & { tenant: string; checksum: string; source_url?: string | null }

export type ArtifactFilter = {
  include_ids?: string[]
  exclude_ids?: string[]
  run_ids?: string[]
  url_hashes?: string[]
  blob_keys?: string[]
  kinds?: string[]
  pipeline_ids?: string[]
  content_types?: string[]
  created_before?: string
  created_after?: string
}

// The URL is joined from the catalogue when read, one index probe a row: the crawl writes no
// more for it (the engine upserts a URL's link before it stores the URL's artifacts).
const URL_COLUMN = '(SELECT l.url FROM links l WHERE l.tenant = t.tenant AND l.hash = t.url_hash) AS url'
const STORED = 't.id, t.run_id, t.url_hash, t.blob_key, t.kind, t.pipeline_id, t.content_type, t.size, t.created_at'
export const ARTIFACT_COLUMNS = `${STORED}, ${URL_COLUMN}`
export const toArtifact = (r: ArtifactRow): Artifact => ({
  id: r.id,
  run_id: r.run_id,
  url: r.url,
  url_hash: r.url_hash,
  blob_key: r.blob_key,
  kind: r.kind,
  pipeline_id: r.pipeline_id,
  content_type: r.content_type,
  size: r.size,
  created_at: iso(r.created_at)!,
})

/** `text/html; charset=utf-8` → `text/html`: what a `content_types` filter compares. */
const MEDIA_TYPE_SQL = "lower(trim(substr(t.content_type, 1, instr(t.content_type || ';', ';') - 1)))"

/**
 * One value of a keyed filter walks its (tenant, column, seq) index in order; several are
 * looked up and sorted (ListQuery's selective case).
 */
function keyed(q: ListQuery, column: string, values: string[] | undefined): ListQuery {
  if (values?.length === 1) return q.when(values, `${column} = ${TEXT}`, values[0]!)
  return q.in(column, values, true)
}

// The row's link_seq: the seq of its tenant's catalogue link of the URL (migration 015).
const INSERT_ROW = '(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, (SELECT l.seq FROM links l WHERE l.tenant = ? AND l.hash = ?))'
const INSERT = 'INSERT INTO artifacts (tenant, id, run_id, url_hash, blob_key, kind, pipeline_id, content_type, size, checksum, created_at, source_url, link_seq)'

/**
 * Artifacts: the catalogue of what runs stored in the blob store. Rows name their blob by
 * `blob_key`; deleting a blob is the caller's job (SQL cannot), after asking `blobShared`.
 */
export function artifactRepository(db: Database) {
  const sourceOf = db.query(`SELECT source_url FROM artifacts WHERE tenant = ${TEXT} AND id = ${TEXT}`)
  const byId = db.query(`SELECT ${ARTIFACT_COLUMNS} FROM artifacts t WHERE t.tenant = ${TEXT} AND t.id = ${TEXT}`)
  // An artifact is found by URL through its link's seq (artifacts_by_link, migration 015): the
  // tenant's links of the hashes first, then their rows (the tenant term made unindexable, so
  // the link index drives).
  const linkSeqs = db.query(`SELECT seq FROM links WHERE tenant = ${TEXT} AND hash IN (SELECT value FROM json_each(${TEXT}))`)
  const seqsOf = (tenant: string, hashes: readonly string[]): number[] => (linkSeqs.all(tenant, JSON.stringify(hashes)) as { seq: number }[]).map((r) => r.seq)
  const byUrls = db.query(`SELECT ${ARTIFACT_COLUMNS} FROM artifacts t WHERE t.link_seq IN (SELECT value FROM json_each(${TEXT})) AND +t.tenant = ${TEXT} AND t.run_id = ${TEXT} ORDER BY t.seq`)
  // RETURNING cannot run the URL's subquery: the URL is looked up beside it.
  const remove = db.query(`DELETE FROM artifacts WHERE tenant = ${TEXT} AND id = ${TEXT} RETURNING ${STORED.replaceAll('t.', '')}`)
  const urlOf = db.query(`SELECT url FROM links WHERE tenant = ${TEXT} AND hash = ${TEXT}`)
  const removeRun = db.query(`DELETE FROM artifacts WHERE tenant = ${TEXT} AND run_id = ${TEXT} RETURNING blob_key`)
  const otherUser = db.query(`SELECT 1 AS one FROM artifacts WHERE blob_key = ${TEXT} AND NOT (tenant = ${TEXT} AND id = ${TEXT}) LIMIT 1`)
  const anyUser = db.query(`SELECT 1 AS one FROM artifacts WHERE blob_key = ${TEXT} LIMIT 1`)
  const claimed = db.query(`SELECT DISTINCT blob_key FROM artifacts WHERE blob_key IN (SELECT value FROM json_each(${TEXT}))`)
  const requestDeletion = db.query(`INSERT OR IGNORE INTO body_deletions (run_id, requested_at) VALUES (${TEXT}, ?)`)
  const pendingDeletions = db.query('SELECT run_id FROM body_deletions ORDER BY requested_at, run_id')
  const deletionDone = db.query(`DELETE FROM body_deletions WHERE run_id = ${TEXT}`)

  /**
   * Records artifacts in multi-row statements (multiRowWriter): 0.85 times as long as a
   * statement each for a crawl's batches of about 31 rows, commits included (decision 110).
   * Statements and nothing else, so the engine can call it inside its own batch transaction; a
   * duplicate (tenant, id) throws, and the transaction with it.
   */
  const writeRows = multiRowWriter<NewArtifact>(db, INSERT, INSERT_ROW, (a, params) => {
    params.push(a.tenant, a.id, a.run_id, a.url_hash, a.blob_key, a.kind, a.pipeline_id, a.content_type, a.size, a.checksum, a.created_at, a.source_url ?? null, a.tenant, a.url_hash)
  })
  const insertMany = (rows: readonly NewArtifact[]): void => writeRows(rows, undefined)

  const query = (tenant: string, f: ArtifactFilter): ListQuery => {
    const q = new ListQuery('artifacts', tenant).in('t.id', f.include_ids, true).notIn('t.id', f.exclude_ids)
    // `url_hashes`: one URL walks its link's entries in order; several are looked up and sorted.
    return keyed(q, 't.run_id', f.run_ids)
      .parents('t.link_seq', f.url_hashes && seqsOf(tenant, f.url_hashes))
      .in('t.blob_key', f.blob_keys, true)
      .in('t.kind', f.kinds)
      .in('t.pipeline_id', f.pipeline_ids)
      .in(MEDIA_TYPE_SQL, f.content_types?.map(mimeEssence))
      .range('t.created_at', f.created_before, f.created_after)
  }

  return {
    /** Records one artifact (insertMany of one). */
    insert(a: NewArtifact): void {
      insertMany([a])
    },
    insertMany,
    /** Where a parsed artifact kept as its page's raw body is re-parsed at; null for stored content (or no such artifact). */
    source(tenant: string, id: string): string | null {
      return (sourceOf.get(tenant, id) as { source_url: string | null } | null)?.source_url ?? null
    },
    get(tenant: string, id: string): Artifact | null {
      const row = byId.get(tenant, id) as ArtifactRow | null
      return row ? toArtifact(row) : null
    },
    /** Deletes the row and answers what it was; null when it did not exist for this tenant. */
    delete(tenant: string, id: string): Artifact | null {
      const row = remove.get(tenant, id) as Omit<ArtifactRow, 'url'> | null
      if (!row) return null
      const link = urlOf.get(tenant, row.url_hash) as { url: string } | null
      return toArtifact({ ...row, url: link?.url ?? null })
    },
    /**
     * A run's artifacts of these URLs (by link hash, at most a few hundred), oldest first: one
     * index lookup a URL, what an export reads for each page of visits.
     */
    forUrls(tenant: string, runId: string, urlHashes: readonly string[]): Artifact[] {
      if (!urlHashes.length) return []
      return (byUrls.all(JSON.stringify(seqsOf(tenant, urlHashes)), tenant, runId) as ArtifactRow[]).map(toArtifact)
    },
    /** Whether a row other than this one (of any tenant) points at its blob, which must then stay. */
    blobShared(tenant: string, a: Pick<Artifact, 'id' | 'blob_key'>): boolean {
      return otherUser.get(a.blob_key, tenant, a.id) !== null
    },
    /**
     * Deletes every artifact of a run and answers the blob keys no remaining row points at.
     * Call it in the run's delete transaction; the bodies go after the commit (a crash in
     * between leaves unreferenced bytes, never a row whose blob is gone), all of the run's
     * prefix at once (requestBodyDeletion), those keys among them. Works whether or not the
     * run row still exists.
     */
    deleteForRun(tenant: string, runId: string): string[] {
      return db
        .transaction(() => {
          const keys = new Set((removeRun.all(tenant, runId) as { blob_key: string }[]).map((r) => r.blob_key))
          return [...keys].filter((key) => anyUser.get(key) === null)
        })
        .immediate()
    },
    /** Which of these blob keys an artifact row (of any tenant) names: those bodies must stay. */
    claimed(keys: string[]): Set<string> {
      if (!keys.length) return new Set()
      return new Set((claimed.all(JSON.stringify(keys)) as { blob_key: string }[]).map((r) => r.blob_key))
    },
    /**
     * Records that these runs' bodies are to be deleted: call it in the transaction that deletes
     * the runs, so a crash before the bodies are gone leaves the request (body_deletions).
     */
    requestBodyDeletion(runIds: string[], now = Date.now()): void {
      for (const id of runIds) requestDeletion.run(id, now)
    },
    /** Runs whose bodies are still to be deleted, oldest request first. */
    pendingBodyDeletions: (): string[] => (pendingDeletions.all() as { run_id: string }[]).map((r) => r.run_id),
    bodyDeletionDone: (runId: string): void => void deletionDone.run(runId),
    /** Newest first, like every other list. */
    list(tenant: string, f: ArtifactFilter, after: number | undefined, perPage: number): Page<Artifact> {
      return query(tenant, f).page(db, ARTIFACT_COLUMNS, after, perPage, toArtifact)
    },
    /** The query behind a list page (tests EXPLAIN it). */
    query,
  }
}
