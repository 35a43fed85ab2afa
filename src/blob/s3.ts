import type { S3Options } from 'bun'
import { assertValidKey, BlobError, isValidKey, listRange, type BlobInfo, type BlobStore } from './blob-store'
import { ioError, tooLarge, toInfo } from './body'
import { Operations } from './operations'
import { Checksum, checksumOf } from './checksum'
import { sqliteS3Index, type S3Index, type S3IndexOpener } from './s3-index'
import type { S3Location } from '../config'
import type { Synchronous } from '../sqlite/wal'

/** Tuning of the S3 store; the defaults suit AWS and the tests alike. */
export type S3BlobStoreOptions = {
  /** Multipart part size in bytes: S3's smallest part and Bun's default. 5 MiB. */
  partSize?: number
  /** Parts of one put uploaded at once. 2. */
  queueSize?: number
  /** Bodies over this many bytes are refused with `too_large`. partSize × 10,000 (S3's most parts an upload may have). */
  maxBytes?: number
  /** blobs-s3.db durability, as applyWalPragmas says. `normal`. */
  synchronous?: Synchronous
  /** Where the index lives: blobs-s3.db in the data dir (sqliteS3Index), or the store's database. */
  index?: S3IndexOpener
  /**
   * How long S3 may go without answering, or without taking more of an upload's body, before
   * the operation fails with `io`. 60 s. Bun.S3Client has no timeout of its own: a server that
   * accepts the connection and never answers held an operation, and the crawl page behind it,
   * forever.
   */
  timeoutMs?: number
}

const MIN_PART = 5 * 1024 * 1024
const MAX_PARTS = 10_000
// Bun hands a GET's body over in the chunks its HTTP client read (at most 64 KiB against s3rver
// on loopback, but nothing promises it); the artifacts route streams whatever it is given, so
// chunks are cut to this size (views, no copies) whatever Bun does.
const READ_CHUNK = 64 * 1024

/** One read of a stream reader (the DOM lib's ReadableStreamReadResult, which Bun's types lack). */
type Read = { done: true; value?: Uint8Array } | { done: false; value: Uint8Array }
type Reader = { read(): Promise<Read>; cancel(reason?: unknown): Promise<void> }

/** What an upload learnt before it failed: refused by us (too large, a failing body) before S3 completed anything. */
type UploadState = { refusal: BlobError | null }

/**
 * Blobs as S3 objects (design.md §8): the object `prefix + key` holds the bytes, with the content
 * type as its Content-Type; the index (s3-index.ts: `blobs-s3.db` in the data dir, or a table of
 * the PostgreSQL store) holds each object's size, checksum and content type as its put computed
 * them, and is what head answers from. An object is
 * written before its row and its row removed only after the object, except while a put
 * replaces a key: then the old row goes first, so a crash mid-upload leaves the key missing
 * rather than described by a row that may not fit the bytes S3 now holds.
 */
export class S3BlobStore implements BlobStore {
  private readonly client: Bun.S3Client
  private readonly indexRows: S3Index
  private readonly partSize: number
  private readonly queueSize: number
  private readonly maxBytes: number
  private readonly timeoutMs: number
  private readonly ops = new Operations()
  /** The last operation queued on each key: puts and deletes of one key run one at a time, in call order. */
  private readonly tails = new Map<string, Promise<unknown>>()

  constructor(
    dataDir: string,
    private readonly location: S3Location,
    clientOptions: S3Options,
    opts: S3BlobStoreOptions = {},
  ) {
    this.partSize = opts.partSize ?? MIN_PART
    if (!(this.partSize >= MIN_PART)) throw new RangeError(`S3BlobStore partSize must be at least ${MIN_PART} (S3's smallest part)`)
    this.queueSize = Math.max(1, opts.queueSize ?? 2)
    this.maxBytes = opts.maxBytes ?? this.partSize * MAX_PARTS
    if (!(this.maxBytes >= 0)) throw new RangeError('S3BlobStore maxBytes must be a non-negative number')
    this.timeoutMs = opts.timeoutMs ?? 60_000
    if (!(this.timeoutMs > 0)) throw new RangeError('S3BlobStore timeoutMs must be positive')
    this.client = new Bun.S3Client(clientOptions)
    this.indexRows = (opts.index ?? sqliteS3Index)(dataDir, opts.synchronous ?? 'normal')
  }

  /** The path of blobs-s3.db, when the index is there (the engine's checkpoint thread opens it too). */
  get databaseFile(): string | undefined {
    return this.indexRows.databaseFile
  }

  /** The object key of a blob key: the prefix, then the key. */
  objectKey(key: string): string {
    // Bun.S3Client drops a key's trailing slashes from the request, which would make `t/x/`
    // and `t/x` one object; `~`, which no blob key holds, keeps them apart.
    return this.location.prefix + (key.endsWith('/') ? `${key}~` : key)
  }

  put(key: string, body: Uint8Array | ReadableStream<Uint8Array>, contentType: string): Promise<BlobInfo> {
    return this.ops.track(() => {
      assertValidKey(key)
      if (typeof contentType !== 'string') throw new TypeError('blob content type must be a string')
      if (!(body instanceof Uint8Array) && !(body instanceof ReadableStream)) throw new TypeError('blob body must be a Uint8Array or a ReadableStream')
      if (body instanceof Uint8Array && body.byteLength > this.maxBytes) throw tooLarge(this.maxBytes)
      return this.serial(key, () => this.replace(key, body, contentType))
    })
  }

  private async replace(key: string, body: Uint8Array | ReadableStream<Uint8Array>, contentType: string): Promise<BlobInfo> {
    const name = this.indexName(key)
    const old = await this.indexed(name)
    if (old) await this.unindex(name)
    const upload: UploadState = { refusal: null }
    let info: BlobInfo
    try {
      info = await this.upload(this.objectKey(key), body, contentType, upload)
    } catch (e) {
      // Refused before S3 completed anything (too large, the body's stream failed): S3 still
      // holds the old body, so its row comes back. After an S3 or network failure the upload
      // may or may not have landed, and the key stays missing rather than maybe wrong.
      if (old && upload.refusal) {
        await this.reindex(name, toInfo(old)).catch(() => {})
      }
      throw e
    }
    await this.reindex(name, info)
    return info
  }

  /**
   * Uploads a body: one PUT up to a part, a multipart upload past that (Bun.S3Client decides
   * from the stream, `partSize` at a time, `queueSize` parts at once). Its size and checksum are
   * taken as Bun reads it; erroring the stream makes Bun fail the upload without completing it,
   * which is how too_large and a failing body leave the object as it was.
   */
  private async upload(objectKey: string, body: Uint8Array | ReadableStream<Uint8Array>, contentType: string, state: UploadState): Promise<BlobInfo> {
    if (body instanceof Uint8Array && body.byteLength <= this.partSize) {
      await watched(this.client.write(objectKey, body, { type: contentType }), this.timeoutMs, 'storing the blob').result.catch((e: unknown) => Promise.reject(s3Error(e)))
      return { size: body.byteLength, checksum: checksumOf(body), contentType }
    }
    const reader = (body instanceof Uint8Array ? chunksOf(body, this.partSize) : body).getReader()
    const hasher = new Checksum()
    let size = 0
    let over = false
    const refuse = (controller: ReadableStreamDefaultController<Uint8Array>, err: BlobError) => {
      // Once the upload has failed (a timeout), what the stream does after says nothing about S3.
      if (!over) state.refusal = err
      controller.error(err)
    }
    // Every chunk Bun takes is progress: the deadline is S3 taking nothing, and answering nothing, for timeoutMs.
    let progress = () => {}
    const counted = new ReadableStream<Uint8Array>({
      pull: async (controller) => {
        progress()
        let next: Read
        try {
          next = await reader.read()
        } catch (e) {
          return refuse(controller, ioError(e, 'reading the blob body failed'))
        }
        if (next.done) return controller.close()
        size += next.value.byteLength
        if (size > this.maxBytes) {
          await reader.cancel().catch(() => {})
          return refuse(controller, tooLarge(this.maxBytes))
        }
        hasher.update(next.value)
        controller.enqueue(next.value)
      },
      cancel: (reason) => reader.cancel(reason),
    })
    try {
      // A Response is how Bun's types take a stream body; Bun reads its stream as it uploads.
      const write = watched(this.client.write(objectKey, new Response(counted), { type: contentType, partSize: this.partSize, queueSize: this.queueSize }), this.timeoutMs, 'storing the blob')
      progress = write.touch
      await write.result
    } catch (e) {
      over = true
      // Bun may stop reading without cancelling (a failed part): the caller's stream is let go either way.
      await reader.cancel().catch(() => {})
      throw state.refusal ?? s3Error(e)
    }
    return { size, checksum: hasher.digest(), contentType }
  }

  async get(key: string): Promise<{ info: BlobInfo; stream: ReadableStream<Uint8Array> } | null> {
    assertValidKey(key)
    return this.ops.track(async () => {
      const row = await this.indexed(this.indexName(key))
      if (!row) return null
      const info = toInfo(row)
      // Bun reports a missing object only once the stream is read: the first chunk is read
      // here, so a row whose object is gone answers null instead of a stream that fails.
      const reader = this.client.file(this.objectKey(key)).stream().getReader()
      let first: Read
      try {
        first = await readWatched(reader, key, this.timeoutMs)
      } catch (e) {
        if (isNoSuchKey(e)) return null
        throw e
      }
      return { info, stream: resumed(first, reader, key, this.timeoutMs) }
    })
  }

  async head(key: string): Promise<BlobInfo | null> {
    assertValidKey(key)
    return this.ops.track(async () => {
      const row = await this.indexed(this.indexName(key))
      return row ? toInfo(row) : null
    })
  }

  delete(key: string): Promise<boolean> {
    return this.ops.track(() => {
      assertValidKey(key)
      return this.serial(key, async () => {
        // The row first: a crash between the two leaves an object without a row (the next delete
        // of the key removes it), never a row describing bytes that are gone. The DELETE is sent
        // row or not, for that reason.
        const existed = await this.unindex(this.indexName(key))
        await watched(this.client.delete(this.objectKey(key)), this.timeoutMs, `deleting blob ${key}`).result.catch((e: unknown) => Promise.reject(s3Error(e, `deleting blob ${key} failed`)))
        return existed
      })
    })
  }

  /** Lists the bucket itself (ListObjectsV2), so objects a crash left without an index row are found. */
  list(prefix: string, after: string | null, limit: number): Promise<string[]> {
    return this.ops.track(async () => {
      const r = listRange(prefix, after, limit)
      const base = this.location.prefix
      const listing = await watched(
        this.client.list({ prefix: base + r.prefix, maxKeys: r.max, ...(r.after > r.prefix ? { startAfter: this.objectKey(r.after) } : {}) }),
        this.timeoutMs,
        `listing blobs under ${prefix}`,
      ).result.catch((e: unknown) => Promise.reject(s3Error(e, `listing blobs under ${prefix} failed`)))
      const keys: string[] = []
      for (const object of listing.contents ?? []) {
        if (!object.key.startsWith(base)) continue
        // objectKey's `~` for a trailing slash, undone; anything that is no blob key is not ours.
        const raw = object.key.slice(base.length)
        const key = raw.endsWith('/~') ? raw.slice(0, -1) : raw
        if (isValidKey(key) && key > r.after && key.startsWith(r.prefix)) keys.push(key)
      }
      // S3 lists in key order; s3rver and others may not, and the caller pages by the last key.
      return keys.sort()
    })
  }

  async close(): Promise<void> {
    if (!(await this.ops.close(() => this.indexRows.flush()))) return
    await this.indexRows.close()
  }

  private indexName(key: string): string {
    return `${this.location.bucket}/${this.objectKey(key)}`
  }

  private indexed(name: string) {
    return this.indexRows.get(name).catch((e: unknown) => Promise.reject(ioError(e, 'the S3 blob index failed')))
  }

  private reindex(name: string, info: BlobInfo): Promise<void> {
    const row = { size: info.size, checksum: info.checksum, content_type: info.contentType }
    return this.indexRows.upsert(name, row).catch((e: unknown) => Promise.reject(ioError(e, 'the S3 blob index failed')))
  }

  /** Whether the name had a row. */
  private unindex(name: string): Promise<boolean> {
    return this.indexRows.delete(name).catch((e: unknown) => Promise.reject(ioError(e, 'the S3 blob index failed')))
  }

  private serial<T>(key: string, work: () => Promise<T>): Promise<T> {
    const before = this.tails.get(key)
    const p = before ? before.then(work) : work()
    const tail = p.then(
      () => {},
      () => {},
    )
    this.tails.set(key, tail)
    void tail.then(() => {
      if (this.tails.get(key) === tail) this.tails.delete(key)
    })
    return p
  }
}

const codeOf = (e: unknown) => (e as { code?: unknown } | null)?.code
const isNoSuchKey = (e: unknown) => codeOf(e) === 'NoSuchKey'

/** Any failure of S3 or of the way to it is `io`: the caller may retry; the S3 error code stays in the message and the cause. */
function s3Error(e: unknown, what = 'S3 blob storage failed'): BlobError {
  const code = codeOf(e)
  return ioError(e, typeof code === 'string' ? `${what}: ${code}` : what)
}

/** A large Uint8Array body as a stream, so it takes the multipart path. */
function chunksOf(bytes: Uint8Array, size: number): ReadableStream<Uint8Array> {
  let off = 0
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      if (off >= bytes.byteLength) return controller.close()
      controller.enqueue(bytes.subarray(off, off + size))
      off += size
    },
  })
}

/**
 * `work`, failing with `io` when `ms` pass without it settling; `touch` restarts the wait (an
 * upload that is still taking its body). The request itself cannot be aborted (Bun.S3Client takes
 * no signal): it is left to end or fail on its own, and its outcome is ignored.
 */
function watched<T>(work: Promise<T>, ms: number, what: string): { result: Promise<T>; touch: () => void } {
  let timer: ReturnType<typeof setTimeout> | undefined
  let expire!: (e: BlobError) => void
  const expired = new Promise<never>((_, reject) => (expire = reject))
  const touch = () => {
    clearTimeout(timer)
    timer = setTimeout(() => expire(new BlobError('io', `${what} failed: S3 did not answer within ${ms / 1000} s`)), ms)
  }
  touch()
  const result = Promise.race([work, expired]).finally(() => clearTimeout(timer))
  return { result, touch }
}

/** One read of a GET's body within the deadline; a failure is `io` (its S3 code kept, so NoSuchKey still reads as such) and lets the body go. */
async function readWatched(reader: Reader, key: string, timeoutMs: number): Promise<Read> {
  try {
    return await watched(reader.read(), timeoutMs, `reading blob ${key}`).result
  } catch (e) {
    void reader.cancel().catch(() => {})
    throw isNoSuchKey(e) ? e : s3Error(e, `reading blob ${key} failed`)
  }
}

/** The rest of a GET after its first chunk, in chunks of at most READ_CHUNK, with failures as `io`. */
function resumed(first: Read, reader: Reader, key: string, timeoutMs: number): ReadableStream<Uint8Array> {
  let pending: Uint8Array | null = first.done ? null : first.value
  let done = first.done
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      while (!pending || pending.byteLength === 0) {
        if (done) return controller.close()
        try {
          const next = await readWatched(reader, key, timeoutMs)
          if (next.done) done = true
          else pending = next.value
        } catch (e) {
          return controller.error(s3Error(e, `reading blob ${key} failed`))
        }
      }
      controller.enqueue(pending.subarray(0, READ_CHUNK))
      pending = pending.byteLength > READ_CHUNK ? pending.subarray(READ_CHUNK) : null
    },
    cancel: (reason) => reader.cancel(reason),
  })
}
