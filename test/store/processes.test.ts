/**
 * Several processes on one data dir (design.md §5: each run is held by one process, but any
 * process may serve the API beside it). Every write transaction begins IMMEDIATE: a deferred one
 * that read first and then wrote failed at once with SQLITE_BUSY_SNAPSHOT whenever another
 * process had committed in between (no busy timeout applies to that), and a crawl ended
 * `unknown` over it. Migrations read the schema version under the write lock, so processes
 * opening a new data dir together apply each migration once.
 */
import { afterAll, describe, expect, test } from 'bun:test'
import { Database } from 'bun:sqlite'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { openDatabase } from '../../src/store/db'
import { createSqliteRepositories } from '../../src/store'
import { migrations } from '../../src/store/migrations'

const SRC = resolve(import.meta.dir, '../../src')
const dirs: string[] = []
const tempDir = () => {
  const d = mkdtempSync(join(tmpdir(), 'trawl-procs-'))
  dirs.push(d)
  return d
}
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true })
})

/**
 * Another bun process running `code` with the store modules imported. `ready()` resolves when it
 * prints `ready` (its modules loaded, its databases open); `done` when it exits.
 */
function otherProcess(code: string) {
  const script = `
    import { openDatabase } from ${JSON.stringify(join(SRC, 'store/db.ts'))}
    import { createSqliteRepositories } from ${JSON.stringify(join(SRC, 'store/index.ts'))}
    import { openBlobStore } from ${JSON.stringify(join(SRC, 'blob/index.ts'))}
    import { existsSync } from 'node:fs'
    ${code}
  `
  const proc = Bun.spawn([process.execPath, '-e', script], { stdout: 'pipe', stderr: 'pipe' })
  let stdout = ''
  let signal: () => void = () => {}
  const isReady = new Promise<void>((resolve) => (signal = resolve))
  const reading = (async () => {
    const decoder = new TextDecoder()
    for await (const chunk of proc.stdout) {
      stdout += decoder.decode(chunk, { stream: true })
      if (stdout.includes('ready\n')) signal()
    }
  })()
  const done = (async () => {
    const [stderr, code] = await Promise.all([new Response(proc.stderr).text(), proc.exited])
    await reading
    signal()
    return { code, stdout: stdout.replace('ready\n', ''), stderr }
  })()
  return { ready: () => isReady, done }
}

describe('two processes writing one trawl.db', () => {
  test('read-then-write transactions never fail because the other process committed in between', async () => {
    const dir = tempDir()
    const store = createSqliteRepositories(openDatabase(dir))
    store.jobs.create('acme', { id: 'mine', name: 'n0', config: {}, labels: {} })
    // The other process commits a job at a time for 1.5 s from when it is ready, a millisecond
    // apart. Both sides pause between transactions: SQLite's busy handler is not fair, and a
    // process committing back to back kept the other off the lock for the whole second on a
    // loaded machine (CI saw no overlap at all), which tests nothing.
    const writer = otherProcess(`
      const store = createSqliteRepositories(openDatabase(${JSON.stringify(dir)}))
      console.log('ready')
      const end = Date.now() + 1500
      let n = 0
      while (Date.now() < end) {
        store.transaction(() => store.jobs.create('other', { id: 'j' + n++, name: 'x', config: {}, labels: {} }))
        await Bun.sleep(1)
      }
      console.log(n)
    `)
    await writer.ready()
    const theirs = () => (store.db.query("SELECT count(*) AS n FROM jobs WHERE tenant = 'other'").get() as { n: number }).n
    // Here: updates, each reading the row and then writing it in one transaction, for 1 s
    // while the other process writes.
    const failures: string[] = []
    let updates = 0
    const atStart = theirs()
    const end = Date.now() + 1000
    while (Date.now() < end) {
      try {
        store.jobs.update('acme', 'mine', { name: `n${++updates}` })
      } catch (err) {
        failures.push(`${(err as { code?: string }).code}: ${(err as Error).message}`)
      }
      await Bun.sleep(1)
    }
    const atEnd = theirs()
    const other = await writer.done
    expect(other.stderr).toBe('')
    expect(other.code).toBe(0)
    const written = Number(other.stdout.trim())
    // The two really overlapped: the other process committed all through this one's updates
    // (with a busy loop on each core of a 2-core machine, about 600 in that second; the bar is low).
    expect(atEnd - atStart).toBeGreaterThan(10)
    expect([...new Set(failures)]).toEqual([])
    expect(updates).toBeGreaterThan(100)
    expect(store.jobs.get('acme', 'mine')!.name).toBe(`n${updates}`)
    expect((store.db.query("SELECT count(*) AS n FROM jobs WHERE tenant = 'other'").get() as { n: number }).n).toBe(written)
    store.db.close()
  }, 20_000)
})

describe('processes opening one new data dir at once', () => {
  test('each migration is applied once: every process starts, and both databases reach their version', async () => {
    const dir = tempDir()
    const go = join(tempDir(), 'go')
    // Each process loads, says ready, and waits for the go file: they open the dir together.
    const procs = [0, 1, 2, 3].map(() =>
      otherProcess(`
        console.log('ready')
        while (!existsSync(${JSON.stringify(go)})) await Bun.sleep(1)
        const db = openDatabase(${JSON.stringify(dir)})
        const blobs = openBlobStore(${JSON.stringify(dir)})
        await blobs.close()
        db.close()
        console.log('ok')
      `),
    )
    await Promise.all(procs.map((p) => p.ready()))
    writeFileSync(go, '')
    const opened = await Promise.all(procs.map((p) => p.done))
    for (const o of opened) expect(o).toEqual({ code: 0, stdout: 'ok\n', stderr: '' })
    const db = new Database(join(dir, 'trawl.db'), { readonly: true })
    expect(db.query('PRAGMA user_version').get()).toEqual({ user_version: migrations.length })
    expect((db.query("SELECT count(*) AS n FROM sqlite_master WHERE name = 'frontier'").get() as { n: number }).n).toBe(1)
    db.close()
    const blobs = new Database(join(dir, 'blobs.db'), { readonly: true })
    expect(blobs.query('PRAGMA user_version').get()).toEqual({ user_version: 3 })
    blobs.close()
  }, 30_000)
})
