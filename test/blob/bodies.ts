/** Test bodies and stream helpers shared by the contract suite, the disk tests and the crash child. */

/** `size` bytes that differ with `seed`, cheap to regenerate for comparison. */
export function bodyOf(seed: number, size: number): Uint8Array {
  const out = new Uint8Array(size)
  let x = (seed * 2654435761 + 1) >>> 0
  for (let i = 0; i < size; i++) {
    x = (x * 1664525 + 1013904223) >>> 0
    out[i] = x >>> 24
  }
  return out
}

/** A stream of `bytes` in chunks of `chunk` bytes, produced one pull at a time. */
export function streamOf(bytes: Uint8Array, chunk = 64 * 1024): ReadableStream<Uint8Array> {
  let off = 0
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      if (off >= bytes.byteLength) return controller.close()
      controller.enqueue(bytes.slice(off, off + chunk))
      off += chunk
    },
  })
}

/** A stream that yields `good` bytes and then fails. */
export function failingStream(good: number, chunk = 64 * 1024): ReadableStream<Uint8Array> {
  let sent = 0
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      if (sent >= good) return controller.error(new Error('upstream reset'))
      const n = Math.min(chunk, good - sent)
      controller.enqueue(new Uint8Array(n).fill(1))
      sent += n
    },
  })
}

/** Reads a stream to its end, as one array. */
export async function readAll(stream: ReadableStream<Uint8Array>): Promise<Uint8Array> {
  const chunks: Uint8Array[] = []
  for await (const chunk of stream) chunks.push(chunk)
  const out = new Uint8Array(chunks.reduce((n, c) => n + c.byteLength, 0))
  let off = 0
  for (const c of chunks) {
    out.set(c, off)
    off += c.byteLength
  }
  return out
}
export { checksumOf } from '../../src/blob/checksum'

/** The body the crash child writes under `t/crash/N`. */
export const crashBody = (n: number) => bodyOf(n, n % 8 === 0 ? 300_000 + n : 1000 + (n % 3000))
