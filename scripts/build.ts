// Builds dist/trawl with `bun build --compile`. Flags per design.md, measured fact 1: never --minify or
// --minify-identifiers (mangled names silently disable Elysia's validation code paths);
// --bytecode needs --format=esm; the binary must not pick up .env or bunfig.toml from the cwd.
import { rmSync } from 'node:fs'
import { buildNative } from './native'

const outfile = process.argv[2] ?? 'dist/trawl'
const target = process.argv[3] // e.g. bun-linux-arm64; default: this machine
rmSync(outfile, { force: true }) // a failed build must not leave an old binary looking current

// The native signature checker is built for this machine, so a binary for another target (or
// libc: `-musl`) goes without it (and checks payment signatures in JavaScript). Embedded as a file
// (from native/build/, outside src/), it is found through Bun.embeddedFiles by src/payment/native.ts.
const native = !target || new RegExp(`^bun-${process.platform}-${process.arch}(-baseline|-modern)?$`).test(target) ? buildNative() : null

const args = [
  'build',
  'src/main.ts',
  'src/parse/worker.ts', // parse worker threads (src/parse/pool.ts) load it from inside the binary
  'src/store/checkpoint-worker.ts', // the checkpoint thread (src/store/checkpointer.ts), likewise
  ...(native ? [native] : []),
  '--compile',
  // Keeps src/ the root of the embedded tree whatever else is embedded (src/util/worker-url.ts).
  '--root=src',
  '--minify-syntax',
  '--minify-whitespace',
  '--bytecode',
  '--format=esm',
  '--no-compile-autoload-dotenv',
  '--no-compile-autoload-bunfig',
  '--outfile',
  outfile,
  ...(target ? [`--target=${target}`] : []),
]
const proc = Bun.spawnSync([process.execPath, ...args], { stdout: 'inherit', stderr: 'inherit' })
if (proc.exitCode !== 0) {
  console.error(`build failed (exit ${proc.exitCode})`)
  process.exit(proc.exitCode ?? 1)
}
