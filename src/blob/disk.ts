import { accessSync, constants, existsSync, mkdirSync, statSync } from 'node:fs'
import { hostname } from 'node:os'
import { join } from 'node:path'
import { CommitBatcher } from '../util/commit-batcher'
import { dataDirError, retryBusy, type Synchronous } from '../sqlite/wal'
import { openBlobDb, type BlobRow, type BlobStatements } from './blob-db'
import { assertValidKey, BlobError, listRange, type BlobInfo, type BlobStore } from './blob-store'
import { Operations } from './operations'
import { ioError, readBody, toInfo } from './body'
import { checksumOf } from './checksum'
import { BlobFiles } from './files'
import type { Database } from 'bun:sqlite'
import { pidAlive, pidOnThisHost, processOwner } from '../util/process'

export type DiskBlobStoreOptions = {
  /** Bodies up to this many bytes are rows in blobs.db; larger ones are files. 256 KiB. */
  inlineMax?: number
  /** Bodies over this many bytes are refused with `too_large`. Unlimited. */
  maxBytes?: number
  /** blobs.db durability; see openBlobDb. `normal`. */
  synchronous?: Synchronous
  /** Most operations per transaction. 64. */
  batchMax?: number
  /** Longest a put waits for others to share its transaction while they keep arriving. 2 ms. */
  batchWaitMs?: number
}

const MAX_INLINE = 64 * 1024 * 1024
/** Openers this process entered in blobs.db and has not closed (see register). */
const OPENED_HERE = new Set<string>()

type Op = { kind: 'put'; key: string; info: BlobInfo; file: string | null; body: Uint8Array | null } | { kind: 'delete'; key: string }
/** Whether the key had a row before the operation, and the file that row pointed at. */
type Outcome = { existed: boolean; oldFile: string | null }

/**
 * The default store: bodies up to `inlineMax` as rows of `<dataDir>/blobs.db`, larger ones
 * as files under `<dataDir>/blobs/` with their row pointing at them. A file per small body
 * costs tens of microseconds of kernel time each (design.md, measured fact 10), so small puts are batched
 * into shared transactions instead. Several processes may open one data dir; the one that
 * opens it alone sweeps orphan files (register).
 */
export class DiskBlobStore implements BlobStore {
  private readonly db: Database
  private readonly sql: BlobStatements
  private readonly files: BlobFiles
  private readonly batcher: CommitBatcher<Op, Outcome>
  private readonly inlineMax: number
  private readonly maxBytes: number
  private readonly ops = new Operations()
  /** This store in blobs.db's openers: host, pid, and a random part (a process may open several). */
  private readonly owner = processOwner()
  /** Orphans removed when the store was opened (none when another process had it open). */
  readonly swept: { temps: number; orphans: number }

  constructor(dataDir: string, opts: DiskBlobStoreOptions = {}) {
    this.inlineMax = nonNegative('inlineMax', opts.inlineMax ?? 256 * 1024)
    // One oversized row would fail its whole batch (SQLite's length limit), taking other puts with it.
    if (this.inlineMax > MAX_INLINE) throw new RangeError(`DiskBlobStore inlineMax must be at most ${MAX_INLINE}`)
    this.maxBytes = nonNegative('maxBytes', opts.maxBytes ?? Number.POSITIVE_INFINITY)
    mkdirSync(dataDir, { recursive: true })
    const opened = openBlobDb(dataDir, opts.synchronous ?? 'normal')
    ;({ db: this.db, statements: this.sql } = opened)
    this.files = new BlobFiles(checkedBlobsDir(dataDir))
    try {
      this.swept = this.register(!opened.upgradedFromOld)
    } catch (err) {
      this.db.close()
      throw dataDirError(dataDir, 'blobs/ cannot be read', err)
    }
    const tx = this.db.transaction((ops: Op[]) => ops.map((op) => this.applyOne(op)))
    this.batcher = new CommitBatcher((ops) => tx.immediate(ops), {
      maxBatch: Math.max(1, opts.batchMax ?? 64),
      maxWaitMs: opts.batchWaitMs ?? 2,
    })
  }

  /**
   * Enters this store in blobs.db's openers and, when no other opener is alive, sweeps orphan
   * files (temp files of a write cut short, files no row points at). Another live process may
   * be writing exactly such files, so then nothing is swept; the last one to open alone does
   * it. The sweep runs under blobs.db's write lock, so a process opening meanwhile waits for
   * it before it can write a file.
   */
  private register(maySweep: boolean): { temps: number; orphans: number } {
    const me = hostname()
    const alive = (owner: string) => {
      const pid = pidOnThisHost(owner, me)
      // WAL needs every process on one host: an opener of another host is a leftover (a data
      // dir copied over), and a pid of this host that is gone crashed without closing. A row
      // with this process's own pid that this process did not write was left by a crash of an
      // earlier process with the same pid (a container restarted: pid 1 again).
      if (pid === null) return false
      if (pid === process.pid) return OPENED_HERE.has(owner)
      return pidAlive(pid)
    }
    const attempt = () =>
      this.db
        .transaction(() => {
          let others = 0
          for (const { owner } of this.sql.openers.all()) {
            if (alive(owner)) others++
            else this.sql.removeOpener.run(owner)
          }
          this.sql.addOpener.run(this.owner, Date.now())
          OPENED_HERE.add(this.owner)
          return others > 0 || !maySweep ? { temps: 0, orphans: 0 } : this.files.sweep((name) => this.sql.referenced.get(name) !== null)
        })
        .immediate()
    // A sweep of a large blobs/ can hold the lock past the 5 s busy timeout: keep asking.
    return retryBusy(attempt, 120_000, 5)
  }

  /** The path of blobs.db (the engine's checkpoint thread opens it too). */
  get databaseFile(): string {
    return this.db.filename
  }

  /** Transactions committed and operations they carried since open (tests, metrics). */
  get stats(): { commits: number; ops: number } {
    return { ...this.batcher.counts }
  }

  put(key: string, body: Uint8Array | ReadableStream<Uint8Array>, contentType: string): Promise<BlobInfo> {
    return this.ops.track(() => {
      assertValidKey(key)
      if (typeof contentType !== 'string') throw new TypeError('blob content type must be a string')
      // The hot path (a small page body) reaches the batch queue without an await, so it
      // costs no extra turn and keeps its place relative to deletes called after it.
      if (body instanceof Uint8Array && body.byteLength <= Math.min(this.inlineMax, this.maxBytes)) {
        const info: BlobInfo = { size: body.byteLength, checksum: checksumOf(body), contentType }
        return this.commitPut(key, info, null, body)
      }
      return this.putSpilling(key, body, contentType)
    })
  }

  private async putSpilling(key: string, body: Uint8Array | ReadableStream<Uint8Array>, contentType: string): Promise<BlobInfo> {
    const read = await readBody(body, {
      inlineMax: this.inlineMax,
      maxBytes: this.maxBytes,
      spill: () => this.files.create(this.files.newName(key)).catch((e) => Promise.reject(ioError(e))),
    })
    const info: BlobInfo = { size: read.size, checksum: read.checksum, contentType }
    if (!read.file) return this.commitPut(key, info, null, read.inline)
    // The file is durable under its final name before the row that points at it commits,
    // so a committed row never points at a missing or partial file.
    const file = await read.file.commit().catch(async (e) => {
      await read.file.abort()
      throw ioError(e)
    })
    return this.commitPut(key, info, file, null)
  }

  private async commitPut(key: string, info: BlobInfo, file: string | null, body: Uint8Array | null): Promise<BlobInfo> {
    let outcome: Outcome
    try {
      outcome = await this.batcher.submit({ kind: 'put', key, info, file, body })
    } catch (e) {
      if (file) await this.files.remove(file).catch(() => {})
      throw ioError(e)
    }
    if (outcome.oldFile) await this.files.remove(outcome.oldFile).catch(() => {}) // else swept at next open
    return info
  }

  async get(key: string): Promise<{ info: BlobInfo; stream: ReadableStream<Uint8Array> } | null> {
    assertValidKey(key)
    this.ops.assertOpen()
    const row = this.sql.get.get(key)
    if (!row) return null
    const info = toInfo(row)
    if (row.file === null) return { info, stream: bytesStream(row.body!) }
    try {
      return { info, stream: this.files.read(row.file, row.size) }
    } catch (e) {
      throw ioError(e, `blob file of ${key} is unreadable`)
    }
  }

  async head(key: string): Promise<BlobInfo | null> {
    assertValidKey(key)
    this.ops.assertOpen()
    const row = this.sql.head.get(key)
    return row ? toInfo(row) : null
  }

  delete(key: string): Promise<boolean> {
    return this.ops.track(async () => {
      assertValidKey(key)
      const outcome = await this.batcher.submit({ kind: 'delete', key }).catch((e) => Promise.reject(ioError(e)))
      if (outcome.oldFile) await this.files.remove(outcome.oldFile).catch(() => {}) // else swept at next open
      return outcome.existed
    })
  }

  async list(prefix: string, after: string | null, limit: number): Promise<string[]> {
    this.ops.assertOpen()
    const r = listRange(prefix, after, limit)
    return this.sql.list.all(r.prefix, r.after, r.end, r.max).map((row) => row.key)
  }

  async close(): Promise<void> {
    if (!(await this.ops.close(() => this.batcher.flush()))) return
    try {
      this.sql.removeOpener.run(this.owner)
      OPENED_HERE.delete(this.owner)
    } finally {
      this.db.close()
    }
  }

  // Runs inside the batch's transaction, in submission order, so a put and a delete of one
  // key in the same batch end as they were called.
  private applyOne(op: Op): Outcome {
    if (op.kind === 'delete') {
      const gone = this.sql.delete.get(op.key)
      return { existed: gone !== null, oldFile: gone?.file ?? null }
    }
    const old = this.sql.fileOf.get(op.key)
    const { size, checksum, contentType } = op.info
    this.sql.upsert.run(op.key, size, checksum, contentType, op.file, op.body)
    return { existed: old !== null, oldFile: old?.file ?? null }
  }
}

function bytesStream(bytes: Uint8Array): ReadableStream<Uint8Array> {
  return new ReadableStream<Uint8Array>({
    start(controller) {
      if (bytes.byteLength > 0) controller.enqueue(bytes)
      controller.close()
    },
  })
}

/**
 * `<dataDir>/blobs`, where bodies over the inline limit live: when it is there, it must be a
 * directory this user may list and write (the start-up sweep lists it, puts write into it), or
 * the data dir is refused in one line, like every other part of it.
 */
function checkedBlobsDir(dataDir: string): string {
  const dir = join(dataDir, 'blobs')
  if (!existsSync(dir)) return dir
  if (!statSync(dir).isDirectory()) throw dataDirError(dataDir, 'blobs/ is not a directory', { code: 'EEXIST' })
  try {
    accessSync(dir, constants.R_OK | constants.W_OK | constants.X_OK)
  } catch (err) {
    throw dataDirError(dataDir, 'blobs/ is not writable', err)
  }
  return dir
}

function nonNegative(name: string, value: number): number {
  if (!(value >= 0)) throw new RangeError(`DiskBlobStore ${name} must be a non-negative number`)
  return value
}
