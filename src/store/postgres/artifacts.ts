import { mimeEssence } from '../../parse/document'
import { ARTIFACT_COLUMNS, toArtifact, type ArtifactFilter, type ArtifactRow, type NewArtifact } from '../artifacts'
import type { ArtifactStore } from '../types'
import { PgListQuery } from './list'
import { first, numeric, type Pg } from './pg'

export { pgPaymentStore } from './payments'

/** `text/html; charset=utf-8` → `text/html`: what a `content_types` filter compares (mimeEssence in SQL). */
const MEDIA_TYPE_SQL = "lower(btrim(split_part(t.content_type, ';', 1)))"

/** Seqs of the tenant's catalogue links of these hashes: an artifact is found by URL through them. */
async function linkSeqsOf(sql: Pg, tenant: string, hashes: readonly string[]): Promise<number[]> {
  const rows = numeric<{ seq: number }>(await sql`SELECT seq FROM links WHERE tenant = ${tenant} AND hash = ANY(${sql.array(hashes as string[], 'text')}::text[])`)
  return rows.map((r) => r.seq)
}

/**
 * Inserts a batch's artifact rows inside the caller's transaction, in one statement: the rows
 * travel as one array a column, unnested in their order (identities follow it, so a list shows
 * them newest first as the SQLite engine does), each row's link_seq looked up beside it. A
 * duplicate (tenant, id) fails the statement, and the caller's transaction with it.
 */
export async function insertArtifacts(tx: Pg, rows: readonly NewArtifact[]): Promise<void> {
  if (!rows.length) return
  const col = <K extends keyof NewArtifact>(k: K) => rows.map((r) => (r[k] ?? null) as NewArtifact[K])
  const text = (k: keyof NewArtifact) => tx.array(col(k) as (string | null)[], 'text')
  const int8 = (k: keyof NewArtifact) => tx.array(col(k) as number[], 'int8')
  await tx`INSERT INTO artifacts (tenant, id, run_id, url_hash, blob_key, kind, pipeline_id, content_type, size, checksum, created_at, source_url, link_seq)
           SELECT r.tenant, r.id, r.run_id, r.url_hash, r.blob_key, r.kind, r.pipeline_id, r.content_type, r.size, r.checksum, r.created_at, r.source_url,
                  (SELECT l.seq FROM links l WHERE l.tenant = r.tenant AND l.hash = r.url_hash)
           FROM unnest(${text('tenant')}::text[], ${text('id')}::text[], ${text('run_id')}::text[], ${text('url_hash')}::text[], ${text('blob_key')}::text[],
                       ${text('kind')}::text[], ${text('pipeline_id')}::text[], ${text('content_type')}::text[], ${int8('size')}::bigint[], ${text('checksum')}::text[],
                       ${int8('created_at')}::bigint[], ${text('source_url')}::text[])
                WITH ORDINALITY AS r(tenant, id, run_id, url_hash, blob_key, kind, pipeline_id, content_type, size, checksum, created_at, source_url, n)
           ORDER BY r.n`
}

/** Records, inside the caller's transaction, that these runs' bodies are to be deleted. */
export async function requestBodyDeletion(tx: Pg, runIds: string[], now = Date.now()): Promise<void> {
  if (runIds.length) await tx`INSERT INTO body_deletions (run_id, requested_at) SELECT unnest(${tx.array(runIds, 'text')}::text[]), ${now}::bigint ON CONFLICT (run_id) DO NOTHING`
}

/**
 * Artifacts on PostgreSQL: the catalogue of what runs stored in the blob store. Rows name their
 * blob by `blob_key`; deleting a blob is the caller's job, after asking `blobShared`.
 */
export function pgArtifactStore(sql: Pg): ArtifactStore {
  return {
    get: async (tenant, id) => {
      const row = first<ArtifactRow>(await sql`SELECT ${sql.unsafe(ARTIFACT_COLUMNS)} FROM artifacts t WHERE t.tenant = ${tenant} AND t.id = ${id}`)
      return row ? toArtifact(row) : null
    },

    list: async (tenant, f: ArtifactFilter, after, perPage) => {
      const q = new PgListQuery('artifacts', tenant).in('t.id', f.include_ids).notIn('t.id', f.exclude_ids)
      if (f.run_ids?.length === 1) q.when(f.run_ids, 't.run_id = ?', f.run_ids[0]!)
      else q.in('t.run_id', f.run_ids)
      return q
        .parents('t.link_seq', f.url_hashes && (await linkSeqsOf(sql, tenant, f.url_hashes)))
        .in('t.blob_key', f.blob_keys)
        .in('t.kind', f.kinds)
        .in('t.pipeline_id', f.pipeline_ids)
        .in(MEDIA_TYPE_SQL, f.content_types?.map(mimeEssence))
        .range('t.created_at', f.created_before, f.created_after)
        .page(sql, ARTIFACT_COLUMNS, after, perPage, toArtifact)
    },

    delete: async (tenant, id) => {
      const row = first<ArtifactRow>(await sql`DELETE FROM artifacts t WHERE t.tenant = ${tenant} AND t.id = ${id} RETURNING ${sql.unsafe(ARTIFACT_COLUMNS)}`)
      return row ? toArtifact(row) : null
    },

    blobShared: async (tenant, a) => (await sql`SELECT 1 FROM artifacts WHERE blob_key = ${a.blob_key} AND NOT (tenant = ${tenant} AND id = ${a.id}) LIMIT 1`).length > 0,

    source: async (tenant, id) => first<{ source_url: string | null }>(await sql`SELECT source_url FROM artifacts WHERE tenant = ${tenant} AND id = ${id}`)?.source_url ?? null,

    forUrls: async (tenant, runId, urlHashes) => {
      if (!urlHashes.length) return []
      const seqs = await linkSeqsOf(sql, tenant, urlHashes)
      if (!seqs.length) return []
      const rows = numeric<ArtifactRow>(
        await sql`SELECT ${sql.unsafe(ARTIFACT_COLUMNS)} FROM artifacts t WHERE t.link_seq = ANY(${sql.array(seqs, 'int8')}::bigint[]) AND t.tenant = ${tenant} AND t.run_id = ${runId} ORDER BY t.seq`,
      )
      return rows.map(toArtifact)
    },

    claimed: async (keys) => {
      if (!keys.length) return new Set()
      const rows = await sql`SELECT DISTINCT blob_key FROM artifacts WHERE blob_key = ANY(${sql.array(keys, 'text')}::text[])`
      return new Set((rows as { blob_key: string }[]).map((r) => r.blob_key))
    },

    // COLLATE "C": ties in the same millisecond ordered by bytes, as SQLite compares text.
    pendingBodyDeletions: async () => (await sql`SELECT run_id FROM body_deletions ORDER BY requested_at, run_id COLLATE "C"`).map((r: { run_id: string }) => r.run_id),

    bodyDeletionDone: async (runId) => {
      await sql`DELETE FROM body_deletions WHERE run_id = ${runId}`
    },
  }
}
