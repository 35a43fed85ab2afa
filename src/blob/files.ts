import { closeSync, mkdirSync, openSync, read, readdirSync, unlinkSync } from 'node:fs'
import { open, rename, unlink, type FileHandle } from 'node:fs/promises'
import { dirname, join } from 'node:path'

const TEMP_PREFIX = '.tmp-'
const SHARD = /^[0-9a-f]{2}$/
// Small stream chunks are gathered into writes of this size: one syscall per chunk of a
// trickling response would cost more than the copy.
const WRITE_BUFFER = 1 << 20
const READ_CHUNK = 256 * 1024

const randomHex = (bytes: number) => Buffer.from(crypto.getRandomValues(new Uint8Array(bytes))).toString('hex')

/**
 * Bodies too large for blobs.db, one file each under `<root>/ab/cd/`, where ab/cd come from a
 * hash of the key: 65,536 directories keep even millions of files to a few dozen per
 * directory, and only directories that are used get created. Every version of a key
 * gets a fresh name, so a replaced file is never overwritten in place: a reader that opened
 * the old one keeps reading it, and a crash between rename and commit leaves the old row's
 * file intact.
 */
export class BlobFiles {
  private readonly readyDirs = new Set<string>()

  constructor(readonly root: string) {}

  /** A fresh relative name for a new version of `key`'s body. */
  newName(key: string): string {
    const h = Bun.SHA256.hash(key, 'hex')
    return `${h.slice(0, 2)}/${h.slice(2, 4)}/${h.slice(4, 24)}-${randomHex(8)}`
  }

  path(name: string): string {
    return join(this.root, name)
  }

  /** Opens a temp file beside where `name` will live; `commit` moves it there durably. */
  async create(name: string): Promise<TempFile> {
    const dir = dirname(this.path(name))
    await this.ensureDir(dir)
    const tempPath = join(dir, TEMP_PREFIX + randomHex(8))
    return new TempFile(await open(tempPath, 'wx'), tempPath, this.path(name), name)
  }

  /**
   * A stream of a file's bytes. The file is opened now, synchronously: the caller looked its
   * name up in the same turn, and a file is unlinked only after a commit that stopped
   * referencing it, so the open cannot lose a race with a replace or delete.
   */
  read(name: string, size: number): ReadableStream<Uint8Array> {
    return fdStream(openSync(this.path(name), 'r'), size)
  }

  async remove(name: string): Promise<void> {
    await unlink(this.path(name)).catch((e: NodeJS.ErrnoException) => {
      if (e.code !== 'ENOENT') throw e
    })
  }

  /**
   * Removes temp files left by a crash mid-write and files no row points at (a crash between
   * the rename and the commit, or between a commit and the unlink of the version it
   * replaced). Runs before the store accepts work, so nothing in flight can be mistaken for
   * an orphan.
   */
  sweep(isReferenced: (name: string) => boolean): { temps: number; orphans: number } {
    const removed = { temps: 0, orphans: 0 }
    for (const a of listDir(this.root)) {
      if (!SHARD.test(a)) continue
      for (const b of listDir(join(this.root, a))) {
        if (!SHARD.test(b)) continue
        for (const f of listDir(join(this.root, a, b))) {
          const name = `${a}/${b}/${f}`
          if (f.startsWith(TEMP_PREFIX)) removed.temps++
          else if (!isReferenced(name)) removed.orphans++
          else continue
          unlinkSync(this.path(name))
        }
      }
    }
    return removed
  }

  // New directory entries are only durable once their parent is fsynced; done once per
  // shard per process, so the cost is paid by the first large blob in each shard.
  private async ensureDir(dir: string) {
    if (this.readyDirs.has(dir)) return
    mkdirSync(dir, { recursive: true })
    for (let d = dir; d.length >= this.root.length; d = dirname(d)) await fsyncDir(dirname(d))
    this.readyDirs.add(dir)
  }
}

/** A body being written; nothing is visible under the final name until `commit`. */
export class TempFile {
  private buffered: Uint8Array[] = []
  private bufferedBytes = 0
  private done = false

  constructor(
    private readonly handle: FileHandle,
    private readonly tempPath: string,
    private readonly finalPath: string,
    readonly name: string,
  ) {}

  async write(chunk: Uint8Array): Promise<void> {
    if (chunk.byteLength >= WRITE_BUFFER) {
      await this.drain()
      await writeAll(this.handle, chunk)
      return
    }
    this.buffered.push(chunk)
    this.bufferedBytes += chunk.byteLength
    if (this.bufferedBytes >= WRITE_BUFFER) await this.drain()
  }

  /** fsync, rename into place, fsync the directory: after this the file survives power loss. */
  async commit(): Promise<string> {
    await this.drain()
    await this.handle.sync()
    await this.handle.close()
    this.done = true
    await rename(this.tempPath, this.finalPath)
    await fsyncDir(dirname(this.finalPath))
    return this.name
  }

  async abort(): Promise<void> {
    if (this.done) return
    this.done = true
    await this.handle.close().catch(() => {})
    await unlink(this.tempPath).catch(() => {})
  }

  private async drain() {
    if (this.bufferedBytes === 0) return
    const chunk = this.buffered.length === 1 ? this.buffered[0]! : Buffer.concat(this.buffered, this.bufferedBytes)
    this.buffered = []
    this.bufferedBytes = 0
    await writeAll(this.handle, chunk)
  }
}

async function writeAll(handle: FileHandle, chunk: Uint8Array) {
  for (let off = 0; off < chunk.byteLength;) {
    const { bytesWritten } = await handle.write(chunk, off, chunk.byteLength - off)
    off += bytesWritten
  }
}

async function fsyncDir(dir: string) {
  const handle = await open(dir, 'r')
  try {
    await handle.sync()
  } finally {
    await handle.close()
  }
}

function listDir(dir: string): string[] {
  try {
    return readdirSync(dir)
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return []
    throw e
  }
}

// A stream dropped without being read to the end or cancelled still gives its descriptor back.
const unclosed = new FinalizationRegistry<() => void>((close) => close())

const readAt = (fd: number, buf: Uint8Array, position: number) => new Promise<number>((resolve, reject) => read(fd, buf, 0, buf.byteLength, position, (e, n) => (e ? reject(e) : resolve(n))))

/**
 * Streams an open descriptor and closes it at the end, on error or on cancel. Not
 * Bun.file(fd).stream(): that reads from a dup of the descriptor which Bun closes only when
 * it is garbage collected (descriptors piled up in the tests), and Bun.file(path).stream()
 * opens the path lazily, after a replace or delete may have unlinked it.
 */
function fdStream(fd: number, size: number): ReadableStream<Uint8Array> {
  let position = 0
  let reading: Promise<unknown> = Promise.resolve()
  const closeOnce = once(() => closeSync(fd))
  const token = {}
  const release = () => {
    unclosed.unregister(token)
    closeOnce()
  }
  const stream = new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        try {
          const buf = new Uint8Array(Math.max(1, Math.min(READ_CHUNK, size - position)))
          const pending = readAt(fd, buf, position)
          reading = pending.catch(() => {})
          const n = await pending
          if (n === 0) {
            release()
            controller.close()
            return
          }
          position += n
          controller.enqueue(n === buf.byteLength ? buf : buf.subarray(0, n))
        } catch (e) {
          release()
          controller.error(e)
        }
      },
      async cancel() {
        // A read still in the thread pool must finish before the descriptor number can be reused.
        await reading
        release()
      },
    },
    { highWaterMark: 0 },
  )
  unclosed.register(stream, closeOnce, token)
  return stream
}

// Built outside fdStream so the registry's callback cannot capture (and so keep alive) the stream.
function once(fn: () => void): () => void {
  let called = false
  return () => {
    if (called) return
    called = true
    fn()
  }
}
