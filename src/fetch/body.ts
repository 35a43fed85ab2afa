import { brotliDecompress, inflate, inflateRaw, gunzip, zstdDecompress, type ZlibOptions } from 'node:zlib'
import { FetchError } from './errors'

/**
 * Reads a response body of at most `cap` bytes. The body arrives undecoded (fetch with
 * `decompress: false`) so that both the bytes on the wire and the decoded bytes are bounded:
 * a 50 KB gzip bomb never becomes 50 MB in memory.
 */
export async function readCapped(response: Response, cap: number, signal: AbortSignal): Promise<Uint8Array> {
  const declared = Number(response.headers.get('content-length'))
  if (declared > cap) {
    await response.body?.cancel().catch(() => {})
    throw new FetchError('too_large', `the response body declares ${declared} bytes, over the ${cap}-byte limit (TRAWL_MAX_BODY_BYTES)`)
  }
  if (!response.body) return new Uint8Array(0)
  // With a declared length within the cap and no chunked framing (which Bun follows instead of
  // the length), fetch stops at that length: read it whole, faster than chunk by chunk. The size
  // is checked again after all. The deadline's signal still aborts the read.
  if (response.headers.has('content-length') && !response.headers.has('transfer-encoding') && Number.isSafeInteger(declared)) {
    const whole = new Uint8Array(await response.arrayBuffer())
    if (whole.byteLength > cap) throw tooLarge(cap, 'is larger')
    return whole
  }
  const reader = response.body.getReader()
  const chunks: Uint8Array[] = []
  let size = 0
  const onAbort = () => void reader.cancel().catch(() => {})
  signal.addEventListener('abort', onAbort, { once: true })
  try {
    for (;;) {
      const { done, value } = await reader.read()
      if (signal.aborted) throw signal.reason
      if (done) break
      size += value.byteLength
      if (size > cap) {
        void reader.cancel().catch(() => {})
        throw tooLarge(cap, 'is larger')
      }
      chunks.push(value)
    }
  } finally {
    signal.removeEventListener('abort', onAbort)
  }
  return chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks)
}

type Decoder = (buf: Uint8Array, opts: ZlibOptions, cb: (err: Error | null, out: Buffer) => void) => void
const DECODERS: Record<string, Decoder> = {
  gzip: gunzip,
  'x-gzip': gunzip,
  deflate: inflate,
  br: brotliDecompress as unknown as Decoder,
  zstd: zstdDecompress as unknown as Decoder,
}

/**
 * Undoes the Content-Encoding codings, last applied first, each output bounded by `cap`.
 * Decoding runs on libuv's thread pool, off the request thread.
 */
export async function decodeContent(body: Uint8Array, contentEncoding: string | null, cap: number): Promise<Uint8Array> {
  if (!contentEncoding || body.byteLength === 0) return body
  const codings = contentEncoding
    .split(',')
    .map((c) => c.trim().toLowerCase())
    .filter((c) => c && c !== 'identity')
  let out = body
  for (const coding of codings.reverse()) {
    const decoder = DECODERS[coding]
    if (!decoder) return body // an unknown coding: hand back the bytes as sent, headers tell what they are
    try {
      out = await run(decoder, out, cap)
    } catch (err) {
      // "deflate" is meant to be zlib-wrapped, but servers often send it raw.
      if (coding === 'deflate' && !isTooLarge(err)) out = await run(inflateRaw as Decoder, out, cap).catch((e) => rethrow(e, cap))
      else rethrow(err, cap)
    }
  }
  return out
}

const run = (decoder: Decoder, input: Uint8Array, cap: number) =>
  new Promise<Uint8Array>((resolve, reject) => decoder(input, { maxOutputLength: cap }, (err, out) => (err ? reject(err) : resolve(out))))

const isTooLarge = (err: unknown) => (err as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE'
function rethrow(err: unknown, cap: number): never {
  if (isTooLarge(err)) throw tooLarge(cap, 'decompresses to more')
  throw new FetchError('bad_response', `the response body is not valid for its Content-Encoding: ${(err as Error).message}`)
}

const tooLarge = (cap: number, what: string) => new FetchError('too_large', `the response body ${what} than the ${cap}-byte limit (TRAWL_MAX_BODY_BYTES)`)
