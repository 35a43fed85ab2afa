import { jsonClient } from './client'
import type { Subprocess } from 'bun'
import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { dataDirOf, engineEnv, forgetPlaces } from './binary-engine'

/**
 * Drives the compiled `dist/trawl` (or $TRAWL_BINARY) as a child process over real HTTP, for
 * test/e2e. Every process and temp dir made here is tracked; `cleanup()` ends and removes them.
 * With TRAWL_TEST_ENGINE=postgres every process gets the store of its data dir on PostgreSQL and
 * S3 (test/helpers/binary-engine.ts) unless the test's env names its own database.
 */

export const REPO = resolve(import.meta.dir, '../..')
export const BINARY = resolve(process.env.TRAWL_BINARY ?? join(REPO, 'dist/trawl'))

const START_TIMEOUT_MS = 10_000
const EXIT_TIMEOUT_MS = 10_000

const live = new Set<Subprocess>()
const dirs = new Set<string>()

let building: Promise<void> | null = null
/** Builds the binary once (`bun scripts/build.ts <path>`) when it is not there yet. */
export function ensureBinary(): Promise<void> {
  return (building ??= (async () => {
    if (existsSync(BINARY)) return
    const proc = Bun.spawn([process.execPath, 'scripts/build.ts', BINARY], { cwd: REPO, stdout: 'pipe', stderr: 'pipe', env: childEnv() })
    const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited])
    if (code !== 0 || !existsSync(BINARY)) throw new Error(`building ${BINARY} failed (exit ${code}):\n${out}\n${err}`)
  })())
}

/** The parent's environment without any TRAWL_* setting, plus `extra`. */
export function childEnv(extra: Record<string, string> = {}): Record<string, string> {
  const env: Record<string, string> = {}
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !k.startsWith('TRAWL_')) env[k] = v
  return { ...env, ...extra }
}

/** A fresh temp dir, removed by cleanup(). */
export function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'trawl-e2e-'))
  dirs.add(dir)
  return dir
}

/** `n` distinct ports that were free a moment ago (bound on port 0, then closed). */
export function freePorts(n: number): number[] {
  const listeners = Array.from({ length: n }, () => Bun.listen({ hostname: '127.0.0.1', port: 0, socket: { data() {} } }))
  const ports = listeners.map((l) => l.port)
  for (const l of listeners) l.stop(true)
  return ports
}

export type Exit = { code: number | null; signal: string | number | null; stdout: string; stderr: string }

/**
 * The environment of a trawl process a test starts itself on `dataDir` (`args`: its command line,
 * for a --database-url of its own): `childEnv` with the store of the engine under test.
 */
export async function trawlEnv(dataDir: string, env: Record<string, string> = {}, args: readonly string[] = []): Promise<Record<string, string>> {
  return childEnv(await engineEnv(env, dataDir, args))
}

/** Runs the binary to completion (killed after `timeoutMs`), with TRAWL_* not inherited. */
export async function runBinary(args: string[], env: Record<string, string> = {}, timeoutMs = EXIT_TIMEOUT_MS): Promise<Exit> {
  const cwd = tempDir()
  const proc = Bun.spawn([BINARY, ...args], { cwd, env: await trawlEnv(dataDirOf(args, env, cwd), env, args), stdin: 'ignore', stdout: 'pipe', stderr: 'pipe' })
  live.add(proc)
  const timer = setTimeout(() => proc.kill('SIGKILL'), timeoutMs)
  try {
    const [stdout, stderr] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited])
    return { code: proc.exitCode, signal: proc.signalCode, stdout, stderr }
  } finally {
    clearTimeout(timer)
    live.delete(proc)
  }
}

export type { CallOptions, Reply } from './client'

/** HTTP against one base URL; sends X-Tenant-Id (default `acme`, null for none). */
export const http = (base: string) => jsonClient(base, (request) => fetch(request))

export type StartOptions = {
  /** Data dir; a fresh temp dir when omitted. */
  dataDir?: string
  /** TRAWL_* settings for the child (the parent's are never inherited). */
  env?: Record<string, string>
  /** Ports; free ones are picked when omitted. */
  port?: number
  scrapePort?: number
  /** Flags after the port flags. */
  args?: string[]
}

export type Trawl = Awaited<ReturnType<typeof startTrawl>>

/**
 * Starts `trawl serve --data-dir D --port P --scrape-port S` and waits (up to 10 s) until the
 * start-up line is on stdout or /openapi.json answers. A start that loses a picked port to
 * another process is retried with new ports.
 */
export async function startTrawl(opts: StartOptions = {}) {
  for (let attempt = 1; ; attempt++) {
    try {
      return await startOnce(opts)
    } catch (err) {
      const lostPort = err instanceof StartError && /cannot listen|address in use|EADDRINUSE/i.test(err.stderr)
      if (!lostPort || attempt >= 3 || opts.port !== undefined || opts.scrapePort !== undefined) throw err
    }
  }
}

class StartError extends Error {
  constructor(
    message: string,
    readonly stderr: string,
  ) {
    super(message)
  }
}

async function startOnce(opts: StartOptions) {
  const dataDir = opts.dataDir ?? tempDir()
  const [pickedPort, pickedScrape] = freePorts(2) as [number, number]
  const port = opts.port ?? pickedPort
  const scrapePort = opts.scrapePort ?? pickedScrape
  const args = ['serve', '--data-dir', dataDir, '--port', String(port), '--scrape-port', String(scrapePort), ...(opts.args ?? [])]
  const env = await trawlEnv(dataDir, opts.env, opts.args)
  const proc = Bun.spawn([BINARY, ...args], { cwd: dataDir, env, stdin: 'ignore', stdout: 'pipe', stderr: 'pipe' })
  live.add(proc)
  void proc.exited.then(() => live.delete(proc))

  const out = { stdout: '', stderr: '' }
  const drain = async (stream: ReadableStream<Uint8Array>, key: 'stdout' | 'stderr') => {
    const decoder = new TextDecoder()
    for await (const chunk of stream) out[key] += decoder.decode(chunk, { stream: true })
    out[key] += decoder.decode()
  }
  const drained = Promise.all([drain(proc.stdout, 'stdout'), drain(proc.stderr, 'stderr')]).catch(() => {})

  const managementUrl = `http://127.0.0.1:${port}`
  const scrapeUrl = `http://127.0.0.1:${scrapePort}`
  const deadline = Date.now() + START_TIMEOUT_MS
  for (;;) {
    if (out.stdout.includes(' listening: ')) break
    if (proc.exitCode !== null || proc.signalCode !== null) {
      await drained
      throw new StartError(`trawl ${args.join(' ')} exited (${proc.exitCode ?? proc.signalCode}) before it started:\n${out.stdout}${out.stderr}`, out.stderr)
    }
    const answered = await fetch(`${managementUrl}/openapi.json`, { signal: AbortSignal.timeout(500) }).then(
      (r) => r.ok,
      () => false,
    )
    if (answered) break
    if (Date.now() > deadline) {
      proc.kill('SIGKILL')
      await proc.exited
      throw new Error(`trawl ${args.join(' ')} did not start within ${START_TIMEOUT_MS} ms:\n${out.stdout}${out.stderr}`)
    }
    await Bun.sleep(25)
  }
  // The line is written before the process waits for signals; give a poll that won via HTTP a moment to see it.
  for (let i = 0; i < 40 && !out.stdout.includes('\n'); i++) await Bun.sleep(25)

  const waitExit = async (): Promise<{ code: number | null; signal: string | number | null }> => {
    const timer = setTimeout(() => proc.kill('SIGKILL'), EXIT_TIMEOUT_MS)
    await proc.exited
    clearTimeout(timer)
    await drained
    return { code: proc.exitCode, signal: proc.signalCode }
  }

  return {
    proc,
    pid: proc.pid,
    dataDir,
    port,
    scrapePort,
    managementUrl,
    scrapeUrl,
    /** Management API (sends X-Tenant-Id). */
    api: http(managementUrl),
    /** Scrape API. */
    scrape: http(scrapeUrl),
    stdout: () => out.stdout,
    stderr: () => out.stderr,
    /** SIGTERM, then the exit; a process still alive after 10 s is killed and reported as such. */
    async stop() {
      proc.kill('SIGTERM')
      return waitExit()
    },
    /** SIGKILL, then the exit. */
    async kill9() {
      proc.kill('SIGKILL')
      return waitExit()
    },
  }
}

/** Kills every child still running (by its pid, SIGKILL) and removes every temp dir (their PostgreSQL databases stay until the cluster goes). */
export async function cleanup(): Promise<void> {
  const procs = [...live]
  for (const p of procs) p.kill('SIGKILL')
  await Promise.all(procs.map((p) => p.exited))
  live.clear()
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true })
  dirs.clear()
  await forgetPlaces()
}
