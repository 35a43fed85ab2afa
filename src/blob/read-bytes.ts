import { BlobError, type BlobInfo, type BlobStore } from './blob-store'
import { concat } from './body'

/**
 * A blob's bytes in memory, for a reader that needs the whole body at once (a page to extract
 * from); null when the store has no such blob. Refuses with `too_large` past `maxBytes` without
 * reading on: the size the store recorded is checked first, and the stream is counted too.
 */
export async function readBlobBytes(blobs: BlobStore, key: string, maxBytes: number): Promise<Uint8Array | null> {
  return (await readBlob(blobs, key, maxBytes))?.bytes ?? null
}

/** readBlobBytes with what the store recorded of the blob (its content type). */
export async function readBlob(blobs: BlobStore, key: string, maxBytes: number): Promise<{ info: BlobInfo; bytes: Uint8Array } | null> {
  const blob = await blobs.get(key)
  if (!blob) return null
  const reader = blob.stream.getReader()
  if (blob.info.size > maxBytes) {
    await reader.cancel().catch(() => {})
    throw tooLarge(blob.info.size, maxBytes)
  }
  const chunks: Uint8Array[] = []
  let size = 0
  for (;;) {
    const { done, value } = await reader.read()
    if (done) break
    size += value.byteLength
    if (size > maxBytes) {
      await reader.cancel().catch(() => {})
      throw tooLarge(size, maxBytes)
    }
    chunks.push(value)
  }
  return { info: blob.info, bytes: chunks.length === 1 ? chunks[0]! : concat(chunks, size) }
}

const tooLarge = (size: number, max: number) => new BlobError('too_large', `the blob holds ${size} bytes or more, past the limit of ${max}`)
