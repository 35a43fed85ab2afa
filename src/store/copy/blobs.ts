import type { Database } from 'bun:sqlite'
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { isValidKey } from '../../blob/blob-store'
import { s3ClientOptions } from '../../blob/s3-settings'
import { ConfigError, parseBlobUrl, type S3Location } from '../../config'
import type { Pg } from '../postgres/pg'
import { diskSource, indexNameOf, objectKeyOf, s3Source, type BlobSource } from './blob-source'
import { copyTable, type Progress } from './rows'
import type { TextStats } from './copy-text'

/** What the body copy does, decided before anything is written. */
export type BlobPlan =
  /** No S3 store is named and no artifact row names a body: nothing to do. */
  | { kind: 'none' }
  /** The data dir already keeps its bodies in the bucket the copy names: its index rows are copied, the objects stay. */
  | { kind: 'index'; to: S3Location; source: BlobSource & { index: Database | null } }
  /** Every body an artifact row names is read from `source` and written to `to`. */
  | { kind: 'upload'; to: S3Location; client: Bun.S3Client; source: BlobSource }

export type BlobSettings = {
  dataDir: string
  /** TRAWL_BLOB_URL: where the data dir's bodies are (null: on disk). */
  sourceUrl: string | null
  /** --blobs: where they go (null: where they are, when that is S3). */
  targetUrl: string | null
  /** TRAWL_S3_ENDPOINT, for both. */
  endpoint: string | null
  env: Record<string, string | undefined>
}

const at = (l: S3Location) => `s3://${l.bucket}/${l.prefix}`

function location(url: string, setting: string): S3Location {
  try {
    return parseBlobUrl(url)
  } catch (err) {
    throw err instanceof ConfigError ? new ConfigError(err.message.replace(/^TRAWL_BLOB_URL/, setting)) : err
  }
}

/**
 * Decides where bodies come from and go, and checks the target bucket answers, so that a bad
 * --blobs is refused (one line, exit 2) before any row is copied. With PostgreSQL, bodies live
 * in S3 (design.md §9): a data dir whose artifact rows name bodies needs an S3 location.
 */
export async function planBlobs(s: BlobSettings, bodies: () => number): Promise<BlobPlan> {
  const from = s.sourceUrl ? location(s.sourceUrl, 'TRAWL_BLOB_URL') : null
  if (!from && !existsSync(join(s.dataDir, 'blobs.db')) && existsSync(join(s.dataDir, 'blobs-s3.db'))) {
    throw new ConfigError(`data dir ${s.dataDir} keeps its bodies in S3 (it has blobs-s3.db): set TRAWL_BLOB_URL, TRAWL_S3_ENDPOINT and AWS_* as when it was written`)
  }
  const to = s.targetUrl ? location(s.targetUrl, '--blobs') : from
  if (!to) {
    const n = bodies()
    if (n === 0) return { kind: 'none' }
    throw new ConfigError(`--blobs: needed, as ${s.dataDir} keeps its ${n} bodies on disk and with PostgreSQL bodies live in S3: --blobs s3://bucket/prefix`)
  }
  const client = new Bun.S3Client(s3ClientOptions(to, s.endpoint, s.env))
  await client.list({ prefix: to.prefix, maxKeys: 1 }).catch((err: unknown) => {
    const code = (err as { code?: unknown }).code
    throw new ConfigError(`${s.targetUrl ? '--blobs' : 'TRAWL_BLOB_URL'}: ${at(to)} cannot be used: ${typeof code === 'string' ? `${code}: ` : ''}${(err as Error).message}`)
  })
  if (from && from.bucket === to.bucket && from.prefix === to.prefix) return { kind: 'index', to, source: s3Source(s.dataDir, from, client) }
  const source = from ? s3Source(s.dataDir, from, new Bun.S3Client(s3ClientOptions(from, s.endpoint, s.env))) : diskSource(s.dataDir)
  return { kind: 'upload', to, client, source }
}

export type BlobOutcome = {
  /** Bodies written to the target bucket. */
  uploaded: number
  bytes: number
  /** Index rows written to s3_objects. */
  indexRows: number
  /** Keys artifact rows name that the source store does not have. */
  missing: number
  /** Where they went, for the summary. */
  to: string | null
}

/** Keys read from trawl.db at a time: their uploads run together, then their index rows go in one statement. */
const BATCH = 256
const PARALLEL = 32
const MIB = 1024 * 1024
const PART = 5 * MIB

/**
 * Copies the bodies and their S3 index rows into s3_objects (the table where the PostgreSQL
 * engine's S3 store keeps what blobs-s3.db holds for the SQLite one), inside the copy's
 * transaction: a failure leaves no index row, and objects already uploaded are the same bytes
 * under the same keys when the copy is run again.
 */
export async function copyBlobs(plan: BlobPlan, catalogue: Database, tx: Pg, stats: TextStats, progress: Progress): Promise<BlobOutcome> {
  const outcome: BlobOutcome = { uploaded: 0, bytes: 0, indexRows: 0, missing: 0, to: plan.kind === 'none' ? null : at(plan.to) }
  if (plan.kind === 'none') return outcome
  const keys = catalogue.prepare<{ blob_key: string }, []>('SELECT DISTINCT blob_key FROM artifacts ORDER BY blob_key')
  try {
    if (plan.kind === 'index') {
      // The rows say what each object holds, as the S3 store wrote them: they are copied as they are.
      if (plan.source.index) outcome.indexRows = await copyTable(plan.source.index, tx, 'objects', 's3_objects', ['name', 'size', 'checksum', 'content_type'], stats, progress)
      for (const { blob_key } of keys.iterate()) if (isValidKey(blob_key) && !plan.source.read(blob_key)) outcome.missing++
      return outcome
    }
    let batch: string[] = []
    let lastReport = Date.now()
    const flush = async () => {
      const rows = (await pool(batch, PARALLEL, (key) => upload(plan, key))).filter((r) => r !== null)
      outcome.missing += batch.length - rows.length
      for (const r of rows) {
        outcome.uploaded++
        outcome.bytes += r.size
      }
      if (rows.length) await tx`INSERT INTO s3_objects ${tx(rows)}`
      outcome.indexRows += rows.length
      batch = []
      if (Date.now() - lastReport >= 5_000) {
        lastReport = Date.now()
        progress('bodies', outcome.uploaded, false)
      }
    }
    for (const { blob_key } of keys.iterate()) {
      // An artifact row whose key no store takes names no body (artifact-content.ts reads none).
      if (!isValidKey(blob_key)) continue
      batch.push(blob_key)
      if (batch.length >= BATCH) await flush()
    }
    if (batch.length) await flush()
    progress('bodies', outcome.uploaded, true)
    return outcome
  } finally {
    keys.finalize()
  }
}

type IndexRow = { name: string; size: number; checksum: string; content_type: string }

/** One body read from the source and written to the target; null when the source has none. */
async function upload(plan: Extract<BlobPlan, { kind: 'upload' }>, key: string): Promise<IndexRow | null> {
  const body = plan.source.read(key)
  if (!body) return null
  const { info, bytes } = body
  const objectKey = objectKeyOf(plan.to, key)
  // Bun.S3Client cannot be cancelled: a server that stops answering fails the copy after this long.
  const ms = 60_000 + Math.ceil(info.size / MIB) * 1_000
  const write = () => deadline(plan.client.write(objectKey, bytes, { type: info.contentType, partSize: PART, queueSize: 2 }), ms)
  try {
    // Small bodies go PARALLEL at a time, which is what makes a copy of many fast; multipart
    // uploads one at a time, so the copy's memory stays a few parts whatever the bodies' sizes.
    if (info.size > PART) await oneLarge(write)
    else await write()
  } catch (err) {
    // An object the source's index names but its bucket lost is missing there too.
    if ((err as { code?: unknown }).code === 'NoSuchKey') return null
    const code = (err as { code?: unknown }).code
    throw new Error(`copying the body of ${key} to ${at(plan.to)} failed: ${typeof code === 'string' ? `${code}: ` : ''}${(err as Error).message}`, { cause: err })
  }
  return { name: indexNameOf(plan.to, key), size: info.size, checksum: info.checksum, content_type: info.contentType }
}

let largeTail: Promise<unknown> = Promise.resolve()
function oneLarge<T>(work: () => Promise<T>): Promise<T> {
  const run = largeTail.then(work, work)
  largeTail = run.catch(() => {})
  return run
}

function deadline<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: Timer | undefined
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`S3 did not answer within ${ms / 1000} s`)), ms)
  })
  return Promise.race([work, expired]).finally(() => clearTimeout(timer))
}

/** `work` over `items`, at most `n` at once, answers in the items' order. */
async function pool<T, R>(items: T[], n: number, work: (item: T) => Promise<R>): Promise<R[]> {
  const out = new Array<R>(items.length)
  let next = 0
  const worker = async () => {
    while (next < items.length) {
      const i = next++
      out[i] = await work(items[i]!)
    }
  }
  await Promise.all(Array.from({ length: Math.min(n, items.length) }, worker))
  return out
}
