/**
 * The storage-neutral face of artifact bodies. The disk store is the default; an S3 store
 * implements the same interface, and both run one contract suite (test/blob/contract.ts).
 */

/** `checksum` as src/blob/checksum.ts takes it (`xxh64:…`; bare SHA-256 hex on blobs stored before). */
export type BlobInfo = { size: number; checksum: string; contentType: string }

export interface BlobStore {
  /**
   * Stores `body` under `key`, replacing what was there. Resolves only once the blob would
   * survive a crash of this process; a body longer than the store's limit rejects with
   * `too_large` and leaves any previous blob under `key` untouched. The store may read a
   * Uint8Array body until the promise settles (it is written at the batch's commit, not
   * copied), so the caller must not modify it before then. Concurrent puts and deletes of
   * one key end in the order the store applies them, not necessarily the order of the calls.
   */
  put(key: string, body: Uint8Array | ReadableStream<Uint8Array>, contentType: string): Promise<BlobInfo>
  /** The blob and a stream of its bytes; the caller reads the stream to its end or cancels it. */
  get(key: string): Promise<{ info: BlobInfo; stream: ReadableStream<Uint8Array> } | null>
  head(key: string): Promise<BlobInfo | null>
  /** True when something was deleted. */
  delete(key: string): Promise<boolean>
  /**
   * Keys of the blobs the store holds under `prefix`, in ascending order, after `after` (null:
   * from the start), at most `limit` (1..1000). What is there, not what an index says: the S3
   * store lists the bucket, so an object whose index row a crash lost is listed too.
   */
  list(prefix: string, after: string | null, limit: number): Promise<string[]>
  /** Waits for operations already started, then releases the store; later calls fail with `io`. */
  close(): Promise<void>
  /** The store's own SQLite file, when it has one (its checkpoints run on the checkpoint thread). */
  readonly databaseFile?: string
}

export class BlobError extends Error {
  override readonly name = 'BlobError'
  constructor(
    readonly code: 'too_large' | 'invalid_key' | 'io',
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options)
  }
}

export const MAX_KEY_LENGTH = 512
// Characters that mean the same thing as a file name, an S3 key and a URL path segment, so
// a key never needs escaping whichever store holds it.
const KEY_CHARS = /^[A-Za-z0-9._:/-]+$/

/** Whether `key` is a key every store accepts unchanged. */
export function isValidKey(key: unknown): key is string {
  try {
    assertValidKey(key)
    return true
  } catch {
    return false
  }
}

/** Throws `invalid_key` unless `key` is a key every store accepts unchanged. */
export function assertValidKey(key: unknown): asserts key is string {
  if (typeof key !== 'string' || key.length === 0 || key.length > MAX_KEY_LENGTH) {
    throw new BlobError('invalid_key', `blob key must be 1..${MAX_KEY_LENGTH} characters`)
  }
  if (!KEY_CHARS.test(key)) throw new BlobError('invalid_key', 'blob key may only contain A-Z a-z 0-9 . _ : / -')
  if (key.startsWith('/')) throw new BlobError('invalid_key', 'blob key must not start with /')
  // A `..` segment would let a key that is mapped onto a path (or a prefixed S3 key) escape its
  // prefix; S3 clients (Bun's too) also resolve `.` segments, so `a/./b` would be `a/b`'s object.
  const segments = key.split('/')
  if (segments.includes('..')) throw new BlobError('invalid_key', 'blob key must not contain a .. segment')
  if (segments.includes('.')) throw new BlobError('invalid_key', 'blob key must not contain a . segment')
}

/**
 * The bounds of a `list` call, checked: keys from `prefix`, greater than `after` ('' from the
 * start: no key is empty), and less than `end`, the prefix with its last character raised,
 * which no key under the prefix reaches (keys are ASCII).
 */
export function listRange(prefix: string, after: string | null, limit: number): { prefix: string; after: string; end: string; max: number } {
  if (typeof prefix !== 'string' || prefix.length > MAX_KEY_LENGTH || (prefix !== '' && !KEY_CHARS.test(prefix)))
    throw new BlobError('invalid_key', 'a list prefix may only contain A-Z a-z 0-9 . _ : / -')
  if (!Number.isInteger(limit) || limit < 1 || limit > 1000) throw new RangeError('list limit must be an integer of 1..1000')
  const end = prefix === '' ? '\u007f' : prefix.slice(0, -1) + String.fromCharCode(prefix.charCodeAt(prefix.length - 1) + 1)
  return { prefix, after: after ?? '', end, max: limit }
}
