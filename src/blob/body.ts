import { BlobError, type BlobInfo } from './blob-store'
import { Checksum, checksumOf } from './checksum'
import type { TempFile } from './files'

/** A body taken in: small ones in memory, larger ones already written to a temp file. */
export type ReadBody = { size: number; checksum: string } & ({ inline: Uint8Array; file: null } | { inline: null; file: TempFile })

export type ReadLimits = {
  inlineMax: number
  maxBytes: number
  /** Called at most once, when the body turns out larger than `inlineMax`. */
  spill: () => Promise<TempFile>
}

export const tooLarge = (max: number) => new BlobError('too_large', `blob body is larger than ${max} bytes`)

/**
 * Reads a body once, taking its checksum as it goes. A stream is held in memory only up to `inlineMax`;
 * past that it continues into a temp file, so a 1 GiB body costs a write buffer, not 1 GiB.
 */
export async function readBody(body: Uint8Array | ReadableStream<Uint8Array>, limits: ReadLimits): Promise<ReadBody> {
  if (body instanceof Uint8Array) return readBytes(body, limits)
  if (!(body instanceof ReadableStream)) throw new TypeError('blob body must be a Uint8Array or a ReadableStream')
  return readStream(body, limits)
}

async function readBytes(body: Uint8Array, limits: ReadLimits): Promise<ReadBody> {
  if (body.byteLength > limits.maxBytes) throw tooLarge(limits.maxBytes)
  const checksum = checksumOf(body)
  if (body.byteLength <= limits.inlineMax) return { size: body.byteLength, checksum, inline: body, file: null }
  const file = await limits.spill()
  try {
    await file.write(body)
  } catch (e) {
    await file.abort()
    throw ioError(e)
  }
  return { size: body.byteLength, checksum, inline: null, file }
}

async function readStream(body: ReadableStream<Uint8Array>, limits: ReadLimits): Promise<ReadBody> {
  const reader = body.getReader()
  const hasher = new Checksum()
  const held: Uint8Array[] = []
  let size = 0
  let file: TempFile | null = null
  try {
    for (;;) {
      const { done, value } = await reader.read().catch((e: unknown) => {
        throw ioError(e, 'reading the blob body failed')
      })
      if (done) break
      size += value.byteLength
      if (size > limits.maxBytes) {
        await reader.cancel().catch(() => {})
        throw tooLarge(limits.maxBytes)
      }
      hasher.update(value)
      if (file) await file.write(value)
      else if (size <= limits.inlineMax) held.push(value)
      else {
        file = await limits.spill()
        for (const chunk of held) await file.write(chunk)
        held.length = 0
        await file.write(value)
      }
    }
  } catch (e) {
    await file?.abort()
    throw e instanceof BlobError ? e : ioError(e)
  } finally {
    reader.releaseLock()
  }
  const checksum = hasher.digest()
  if (!file) return { size, checksum, inline: concat(held, size), file: null }
  return { size, checksum, inline: null, file }
}

/** Chunks of `size` bytes in all as one array. */
export function concat(chunks: Uint8Array[], size: number): Uint8Array {
  const out = new Uint8Array(size)
  let off = 0
  for (const c of chunks) {
    out.set(c, off)
    off += c.byteLength
  }
  return out
}

/** A stored blob's row as the stores' indexes hold it, as BlobInfo. */
export const toInfo = (row: { size: number; checksum: string; content_type: string }): BlobInfo => ({ size: row.size, checksum: row.checksum, contentType: row.content_type })

export function ioError(e: unknown, what = 'blob storage failed'): BlobError {
  if (e instanceof BlobError) return e
  return new BlobError('io', `${what}: ${e instanceof Error ? e.message : String(e)}`, { cause: e })
}
