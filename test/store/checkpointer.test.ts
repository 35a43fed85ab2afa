import { afterAll, describe, expect, test } from 'bun:test'
import { Database } from 'bun:sqlite'
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Checkpointer } from '../../src/store/checkpointer'
import { waitFor } from '../helpers/wait'

const dirs: string[] = []
afterAll(() => dirs.forEach((dir) => rmSync(dir, { recursive: true, force: true })))

/** A WAL database with a table of 4 KiB rows, its autocheckpoint at `autoFrames`. */
function walDb(autoFrames: number) {
  const dir = mkdtempSync(join(tmpdir(), 'trawl-ckpt-'))
  dirs.push(dir)
  const path = join(dir, 'x.db')
  const db = new Database(path, { create: true, strict: true })
  db.exec('PRAGMA journal_mode = WAL')
  db.exec(`PRAGMA wal_autocheckpoint = ${autoFrames}`)
  db.exec('CREATE TABLE t (id INTEGER PRIMARY KEY, body BLOB)')
  const insert = db.query('INSERT INTO t (body) VALUES (?)')
  const write = (rows: number) =>
    db.transaction(() => {
      for (let i = 0; i < rows; i++) insert.run(new Uint8Array(4000).fill(i & 255))
    })()
  return { db, path, write }
}

type WalDb = ReturnType<typeof walDb>

/**
 * A WAL database (autocheckpoint at `autoFrames`), `before` run on it, then a checkpoint thread
 * started on it for `fn`; both closed after.
 */
async function withCheckpointer(autoFrames: number, everyMs: number, before: (x: WalDb) => void, fn: (x: WalDb & { checkpointer: Checkpointer }) => Promise<void>) {
  const x = walDb(autoFrames)
  before(x)
  const checkpointer = new Checkpointer([x.path], { everyMs })
  try {
    await fn({ ...x, checkpointer })
  } finally {
    await checkpointer.close()
    x.db.close()
  }
}

const until = (what: () => boolean) => waitFor('the condition', what, 5000, 10)

describe('Checkpointer', () => {
  test('copies committed frames into the database file without the writer checkpointing', () =>
    withCheckpointer(
      0, // the writer never checkpoints
      10,
      ({ path, write }) => {
        write(500)
        expect(statSync(path).size).toBeLessThan(100_000) // the rows are only in the WAL so far
      },
      async ({ db, path, write, checkpointer }) => {
        await until(() => statSync(path).size > 500 * 4000)
        expect(checkpointer.running).toBe(true)
        await checkpointer.close() // after the pass under way, if any
        expect(db.query('SELECT count(*) AS n, sum(length(body)) AS bytes FROM t').get()).toEqual({ n: 500, bytes: 2_000_000 })
        // Every frame was copied back, so the next write starts the WAL over instead of growing it.
        const wal = statSync(`${path}-wal`).size
        write(1)
        expect(statSync(`${path}-wal`).size).toBe(wal)
      },
    ))

  test("steady small commits keep the WAL bounded: the writer's autocheckpoint still restarts it", () =>
    withCheckpointer(
      200,
      5,
      () => {},
      async ({ db, path, write }) => {
        let largest = 0
        for (let i = 0; i < 600; i++) {
          write(5)
          if (i % 20 === 0) await Bun.sleep(1) // let the thread run passes between commits, as a crawl does
          largest = Math.max(largest, statSync(`${path}-wal`).size)
        }
        // 3000 rows of 4 KiB went through it: 12 MB; the WAL never grew far past 200 frames.
        expect(largest).toBeLessThan(2 * 200 * 4200)
        expect(db.query('SELECT count(*) AS n FROM t').get()).toEqual({ n: 3000 })
      },
    ))

  test('an idle database is looked at less and less often (doubling up to 1 s apart); commits bring the passes back', async () => {
    const idle = walDb(0)
    const quiet = new Checkpointer([idle.path], { everyMs: 10 })
    // A second, of which the thread's start takes a part (more on a loaded machine).
    await Bun.sleep(1000)
    await quiet.close()
    // Every 10 ms would be ~100 passes; spacing out doubles from 10 ms: 10, 20, 40 … 640.
    expect(quiet.passes).toBeGreaterThanOrEqual(3)
    expect(quiet.passes).toBeLessThanOrEqual(12)
    idle.db.close()

    const busy = walDb(0)
    const checkpointer = new Checkpointer([busy.path], { everyMs: 10 })
    await Bun.sleep(700) // spaced out by now
    const end = Date.now() + 2000
    while (Date.now() < end) {
      busy.write(1)
      await Bun.sleep(5)
    }
    await checkpointer.close()
    // The first pass that saw the commits went back to every 10 ms for the rest of them.
    expect(checkpointer.passes).toBeGreaterThanOrEqual(15)
    busy.db.close()
  })

  test('close ends the thread and its connection: the last writer to close removes the WAL', async () => {
    const { db, path, write } = walDb(0)
    const checkpointer = new Checkpointer([path], { everyMs: 10 })
    write(50)
    await until(() => statSync(path).size > 50 * 4000)
    await checkpointer.close()
    await checkpointer.close() // twice is harmless
    db.close()
    expect(existsSync(`${path}-wal`)).toBe(false)
    const again = new Database(path, { readonly: true })
    expect(again.query('SELECT count(*) AS n FROM t').get()).toEqual({ n: 50 })
    again.close()
  })

  test('a database it cannot open is reported, never created, and close does not wait', async () => {
    const { db, path } = walDb(0)
    const missing = join(tmpdir(), `trawl-ckpt-missing-${process.pid}.db`)
    const failures: string[] = []
    const checkpointer = new Checkpointer([path, missing], { everyMs: 10, onFailure: (m) => failures.push(m) })
    await until(() => failures.length > 0)
    expect(failures[0]).toContain('unable to open database file')
    expect(checkpointer.running).toBe(false)
    expect(existsSync(missing)).toBe(false)
    const started = performance.now()
    await checkpointer.close()
    expect(performance.now() - started).toBeLessThan(1000)
    db.close()
    expect(existsSync(`${path}-wal`)).toBe(false) // the connection it had opened was closed too
  })
})
