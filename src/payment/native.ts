import { dlopen } from 'bun:ffi'
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

/**
 * The native signature checker (native/signer.c over vendor/secp256k1/, built by scripts/native.ts):
 * Keccak-256 and ecrecover in C, about 0.1 ms a payment where JavaScript BigInt arithmetic takes
 * about 0.8 ms. The compiled binary carries the library as an embedded file; run from source it
 * is native/build/trawl-signer.so at the repository root. Without it (no C compiler at build time, or a binary built for
 * another platform) payments are checked in JavaScript, with the same results.
 */
export type NativeSigner = {
  keccak256(data: Uint8Array): Uint8Array
  /** The 20-byte address that signed `digest` with r‖s `rs` (64 bytes) and recovery id `v`, or null when the signature names no key. */
  ecrecover(digest: Uint8Array, rs: Uint8Array, v: number): Uint8Array | null
}

const SYMBOLS = {
  trawl_keccak256: { args: ['ptr', 'u32', 'ptr'], returns: 'void' },
  trawl_ecrecover: { args: ['ptr', 'ptr', 'i32', 'ptr'], returns: 'i32' },
} as const

const LIBRARY = 'trawl-signer'
let loaded: { signer: NativeSigner | null; why: string } | undefined

/** The native checker, loaded once; null when it is not available (`nativeSignerStatus` says why). */
export function nativeSigner(): NativeSigner | null {
  loaded ??= load()
  return loaded.signer
}

/** For the start-up line: which implementation checks signatures. */
export function nativeSignerStatus(): string {
  loaded ??= load()
  return loaded.why
}

function load(): { signer: NativeSigner | null; why: string } {
  try {
    const embedded = Bun.embeddedFiles.find((file) => (file as Blob & { name: string }).name.startsWith(`${LIBRARY}-`))
    if (embedded) return { signer: fromEmbedded((embedded as Blob & { name: string }).name), why: 'signatures checked by libsecp256k1' }
    // Where scripts/native.ts writes it (import.meta.dir is src/payment/ when run from source).
    const built = join(import.meta.dir, '../../native/build', `${LIBRARY}.so`)
    if (existsSync(built)) return { signer: bind(built), why: 'signatures checked by libsecp256k1' }
    return { signer: null, why: 'signatures checked in JavaScript (this build has no native checker)' }
  } catch (e) {
    return { signer: null, why: `signatures checked in JavaScript (the native checker did not load: ${e instanceof Error ? e.message : String(e)})` }
  }
}

/**
 * dlopen needs a real file. The library is copied into a fresh private directory and removed as
 * soon as it is mapped, so nothing is left behind and no other user can swap it in between.
 */
function fromEmbedded(name: string): NativeSigner {
  const dir = mkdtempSync(join(tmpdir(), 'trawl-native-'))
  try {
    const path = join(dir, `${LIBRARY}.so`)
    writeFileSync(path, readFileSync(`/$bunfs/root/${name}`), { mode: 0o500 })
    return bind(path)
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

function bind(path: string): NativeSigner {
  const { symbols } = dlopen(path, SYMBOLS)
  // The FFI calls are synchronous and these buffers are consumed before they return, so one of
  // each serves every call; callers get copies.
  const hash = new Uint8Array(32)
  const address = new Uint8Array(20)
  return {
    keccak256(data) {
      symbols.trawl_keccak256(data.length ? data : new Uint8Array(1), data.length, hash)
      return hash.slice()
    },
    ecrecover(digest, rs, v) {
      if (digest.length !== 32 || rs.length !== 64) throw new RangeError('ecrecover takes a 32-byte digest and a 64-byte r‖s')
      return symbols.trawl_ecrecover(digest, rs, v, address) === 1 ? address.slice() : null
    },
  }
}
