// Builds the native signature checker (native/signer.c with the vendored libsecp256k1 in
// vendor/secp256k1/) into native/build/trawl-signer.so, which src/payment/native.ts loads and
// scripts/build.ts embeds in the binary. Needs a C compiler (`cc`, or $CC); without one it says so
// and returns null, and payments are then checked in JavaScript, about eight times slower.
// Skips the work when the sources and flags are unchanged since the last build.
import { createHash } from 'node:crypto'
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { join, relative } from 'node:path'

const ROOT = join(import.meta.dir, '..')
const SOURCE = join(ROOT, 'native')
const LIB = join(ROOT, 'vendor/secp256k1')
// src/payment/native.ts looks for the library here when run from source.
const BUILD = join(SOURCE, 'build')
const NATIVE_OUT = join(BUILD, 'trawl-signer.so')

// libsecp256k1's defaults, spelled out so the generated tables and the library agree.
const DEFINES = ['-DECMULT_WINDOW_SIZE=15', '-DECMULT_GEN_PREC_BITS=4']
const GENERATOR_FLAGS = ['-O2', ...DEFINES, `-I${join(LIB, 'src')}`]
const LIBRARY_FLAGS = [
  '-O2',
  '-fPIC',
  '-shared',
  '-fvisibility=hidden',
  // Only trawl_* are exported: the library's own API stays hidden (its header exports it otherwise).
  '-DSECP256K1_API=',
  '-Wall',
  '-Wno-unused-function',
  ...DEFINES,
  '-DENABLE_MODULE_RECOVERY=1',
  ...(process.arch === 'x64' ? ['-DUSE_ASM_X86_64=1'] : []),
  `-I${join(LIB, 'src')}`,
]

/** A compiler command (`$CC` may carry words: `ccache gcc`) and what identifies it: its version line and target. */
type Compiler = { cmd: string[]; identity: string }

function compiler(): Compiler | null {
  const fromEnv = process.env.CC?.trim().split(/\s+/)
  const candidates = [...(fromEnv?.length ? [fromEnv] : []), ['cc'], ['gcc'], ['clang']]
  for (const cmd of candidates) {
    const found = probe(cmd)
    if (found) return found
    if (cmd === fromEnv) console.warn(`trawl: CC="${process.env.CC}" does not run; trying cc, gcc and clang`)
  }
  return null
}

function probe(cmd: string[]): Compiler | null {
  try {
    const version = Bun.spawnSync([...cmd, '--version'], { stdout: 'pipe', stderr: 'ignore' })
    if (version.exitCode !== 0) return null
    const target = Bun.spawnSync([...cmd, '-dumpmachine'], { stdout: 'pipe', stderr: 'ignore' })
    return { cmd, identity: `${version.stdout.toString().split('\n')[0]}\n${target.stdout.toString().trim()}` }
  } catch {
    return null // not on PATH: Bun.spawnSync throws instead of failing
  }
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name)
    if (e.isDirectory()) return path === BUILD ? [] : sourceFiles(path)
    return /\.[ch]$/.test(e.name) ? [path] : []
  })
}

/** What the library depends on: the sources, the flags, the compiler and its target, the platform. */
function fingerprint(cc: Compiler): string {
  const hash = createHash('sha256').update(`${cc.cmd.join(' ')}\n${cc.identity}\n${process.platform}-${process.arch}\n${GENERATOR_FLAGS.join(' ')}\n${LIBRARY_FLAGS.join(' ')}\n`)
  for (const file of [...sourceFiles(SOURCE), ...sourceFiles(LIB)].sort()) hash.update(relative(ROOT, file)).update(readFileSync(file))
  return hash.digest('hex')
}

function run(cmd: string[], cwd = ROOT) {
  const proc = Bun.spawnSync(cmd, { cwd, stdout: 'pipe', stderr: 'pipe' })
  if (proc.exitCode !== 0) throw new Error(`${cmd.join(' ')} failed (exit ${proc.exitCode}):\n${proc.stderr.toString()}${proc.stdout.toString()}`)
}

/** Builds the library when needed; its path, or null when there is no C compiler. Throws if compiling fails. */
export function buildNative(): string | null {
  const cc = compiler()
  if (!cc) {
    console.warn('trawl: no C compiler (cc, gcc or clang): payment signatures will be checked in JavaScript, about eight times slower')
    return null
  }
  const stamp = `${NATIVE_OUT}.sha256`
  const print = fingerprint(cc)
  if (existsSync(NATIVE_OUT) && existsSync(stamp) && readFileSync(stamp, 'utf8') === print) return NATIVE_OUT

  // Per process, so that two builds at once (a bench build beside npm test) never share files.
  const work = join(BUILD, `work-${process.pid}`)
  const partial = `${NATIVE_OUT}.${process.pid}.partial`
  rmSync(work, { recursive: true, force: true })
  mkdirSync(join(work, 'src'), { recursive: true })
  try {
    // The generators write src/precomputed_ecmult*.c relative to their working directory.
    for (const name of ['precompute_ecmult', 'precompute_ecmult_gen']) {
      run([...cc.cmd, ...GENERATOR_FLAGS, join(LIB, 'src', `${name}.c`), '-o', join(work, name)])
      run([join(work, name)], work)
    }
    run([...cc.cmd, ...LIBRARY_FLAGS, join(SOURCE, 'signer.c'), join(LIB, 'src/secp256k1.c'), join(work, 'src/precomputed_ecmult.c'), join(work, 'src/precomputed_ecmult_gen.c'), '-o', partial])
    renameSync(partial, NATIVE_OUT)
    writeFileSync(stamp, print)
  } finally {
    rmSync(work, { recursive: true, force: true })
    rmSync(partial, { force: true })
  }
  return NATIVE_OUT
}

if (import.meta.main) {
  const out = buildNative()
  if (out) console.log(`${relative(ROOT, out)} (${(statSync(out).size / 1024).toFixed(0)} KB)`)
}
