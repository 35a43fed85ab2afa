// A data dir trawl cannot use stops every command that opens one with the line every bad setting
// gets: exit 2, one line on stderr naming the path, what failed and what to do; no stack trace.
// The commands run as the CLI runs them (src/main.ts in a child process).
import { afterAll, describe, expect, test } from 'bun:test'
import { Database } from 'bun:sqlite'
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { openBlobStore } from '../../src/blob'
import { openDatabase } from '../../src/store/db'
import { migrations } from '../../src/store/migrations'

const ROOT = join(import.meta.dir, '..', '..')
const root = mkdtempSync(join(tmpdir(), 'trawl-datadir-'))
// Other users must reach the cases (the permission cases run as nobody when the tests run as root).
chmodSync(root, 0o755)
afterAll(() => rmSync(root, { recursive: true, force: true }))

let n = 0
const place = () => join(root, `case-${++n}`)

const COMMANDS = {
  serve: ['serve', '--port', '0', '--scrape-port', '0'],
  crawl: ['crawl', 'http://127.0.0.1:9/'],
  payments: ['payments'],
} as const
type Command = keyof typeof COMMANDS

// Root writes anywhere, so permission cases need another user: setpriv drops to nobody.
const isRoot = process.getuid?.() === 0
const setpriv = isRoot ? Bun.which('setpriv') : null
const asNobody = isRoot && setpriv ? [setpriv, '--reuid=65534', '--regid=65534', '--clear-groups', '--'] : []
const canTestPermissions = !isRoot || setpriv !== null
/** The user the permission cases run as. */
const uid = isRoot ? 65534 : process.getuid?.()

async function trawl(command: Command, dataDir: string, opts: { unprivileged?: boolean } = {}) {
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('TRAWL_')))
  const argv = [...(opts.unprivileged ? asNobody : []), process.execPath, 'src/main.ts', ...COMMANDS[command], '--data-dir', dataDir]
  // A server that did start (the old behaviour with a read-only trawl.db) must not hang the test.
  const proc = Bun.spawn(argv, { cwd: ROOT, env, stdout: 'pipe', stderr: 'pipe', timeout: 15_000 })
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited])
  return { stdout, stderr, code }
}

const ELSEWHERE = 'with --data-dir or TRAWL_DATA_DIR'

async function expectRefused(command: Command, dataDir: string, line: string, opts: { unprivileged?: boolean } = {}) {
  const r = await trawl(command, dataDir, opts)
  expect({ command, code: r.code, stdout: r.stdout, stderr: r.stderr }).toEqual({ command, code: 2, stdout: '', stderr: `trawl: data dir ${dataDir}: ${line}\n` })
}

/** A data dir trawl has opened and closed: trawl.db and blobs.db, as a server leaves them. */
async function usedDataDir(): Promise<string> {
  const dir = place()
  openDatabase(dir).close()
  await openBlobStore(dir).close()
  return dir
}

describe('the data dir cannot be created', () => {
  test('a path under a regular file', async () => {
    const file = join(place(), 'file')
    mkdirSync(join(file, '..'), { recursive: true })
    writeFileSync(file, 'not a directory')
    for (const command of ['serve', 'crawl'] as const) {
      await expectRefused(
        command,
        join(file, 'data'),
        `the directory cannot be created (a part of the path is a file, not a directory); choose a data dir that is a directory, or can be made one, ${ELSEWHERE}`,
      )
    }
    expect(readFileSync(file, 'utf8')).toBe('not a directory')
  })

  test('a path that is a regular file', async () => {
    const file = place()
    writeFileSync(file, 'not a directory')
    for (const command of ['serve', 'crawl'] as const) {
      await expectRefused(command, file, `the directory cannot be created (a file of that name is in the way); choose a data dir that is a directory, or can be made one, ${ELSEWHERE}`)
    }
  })

  test.skipIf(!canTestPermissions)('under a directory this user cannot write', async () => {
    const parent = place()
    mkdirSync(parent, { mode: 0o555 })
    chmodSync(parent, 0o555)
    for (const command of ['serve', 'crawl'] as const) {
      await expectRefused(
        command,
        join(parent, 'data'),
        `the directory cannot be created (permission denied); let this user (uid ${uid}) write the data dir and its files, or choose another data dir ${ELSEWHERE}`,
        { unprivileged: true },
      )
    }
  })
})

describe('trawl.db cannot be created, opened or written', () => {
  test('trawl.db is a directory', async () => {
    const dir = place()
    mkdirSync(join(dir, 'trawl.db'), { recursive: true })
    for (const command of ['serve', 'crawl', 'payments'] as const) {
      await expectRefused(command, dir, `trawl.db cannot be opened (it is a directory); it is not a trawl database: move it away, or choose another data dir ${ELSEWHERE}`)
    }
  })

  test('trawl.db is not a database: refused, and left as it was', async () => {
    const dir = place()
    mkdirSync(dir)
    writeFileSync(join(dir, 'trawl.db'), 'x'.repeat(4096))
    for (const command of ['serve', 'crawl', 'payments'] as const) {
      await expectRefused(command, dir, `trawl.db cannot be opened (file is not a database); it is not a trawl database: move it away, or choose another data dir ${ELSEWHERE}`)
    }
    expect(readFileSync(join(dir, 'trawl.db'), 'utf8')).toBe('x'.repeat(4096))
  })

  test('trawl.db written by a newer trawl', async () => {
    const dir = place()
    openDatabase(dir).close()
    const raw = new Database(join(dir, 'trawl.db'))
    raw.exec(`PRAGMA user_version = ${migrations.length + 1}`)
    raw.close()
    for (const command of ['serve', 'payments'] as const) {
      const r = await trawl(command, dir)
      expect({ code: r.code, stdout: r.stdout }).toEqual({ code: 2, stdout: '' })
      expect(r.stderr).toBe(`trawl: ${join(dir, 'trawl.db')}: database schema version ${migrations.length + 1} is newer than this binary knows (${migrations.length}); upgrade trawl\n`)
    }
  })

  test.skipIf(!canTestPermissions)('trawl.db, or the data dir, this user cannot write', async () => {
    const readOnlyDb = await usedDataDir()
    chmodSync(readOnlyDb, 0o777)
    chmodSync(join(readOnlyDb, 'trawl.db'), 0o444)
    chmodSync(join(readOnlyDb, 'blobs.db'), 0o666)
    const advice = `let this user (uid ${uid}) write the data dir and its files, or choose another data dir ${ELSEWHERE}`
    for (const command of ['serve', 'crawl', 'payments'] as const) {
      await expectRefused(command, readOnlyDb, `trawl.db is not writable (permission denied); ${advice}`, { unprivileged: true })
    }
    const readOnlyDir = await usedDataDir()
    for (const f of ['trawl.db', 'blobs.db']) chmodSync(join(readOnlyDir, f), 0o666)
    chmodSync(readOnlyDir, 0o555)
    for (const command of ['serve', 'crawl', 'payments'] as const) {
      await expectRefused(command, readOnlyDir, `the directory is not writable (permission denied); ${advice}`, { unprivileged: true })
    }
  })
})

describe('blobs.db cannot be created, opened or written', () => {
  test('blobs.db is a directory', async () => {
    const dir = place()
    mkdirSync(join(dir, 'blobs.db'), { recursive: true })
    for (const command of ['serve', 'crawl'] as const) {
      await expectRefused(command, dir, `blobs.db cannot be opened (it is a directory); it is not a trawl database: move it away, or choose another data dir ${ELSEWHERE}`)
    }
  })

  test('blobs.db is not a database', async () => {
    const dir = place()
    mkdirSync(dir)
    writeFileSync(join(dir, 'blobs.db'), 'y'.repeat(4096))
    for (const command of ['serve', 'crawl'] as const) {
      await expectRefused(command, dir, `blobs.db cannot be opened (file is not a database); it is not a trawl database: move it away, or choose another data dir ${ELSEWHERE}`)
    }
    expect(readFileSync(join(dir, 'blobs.db'), 'utf8')).toBe('y'.repeat(4096))
  })

  test('blobs/ is a file', async () => {
    const dir = await usedDataDir()
    writeFileSync(join(dir, 'blobs'), 'not a directory')
    for (const command of ['serve', 'crawl'] as const) {
      await expectRefused(command, dir, `blobs/ is not a directory (a file of that name is in the way); choose a data dir that is a directory, or can be made one, ${ELSEWHERE}`)
    }
    expect(readFileSync(join(dir, 'blobs'), 'utf8')).toBe('not a directory')
  })

  test.skipIf(!canTestPermissions)('blobs/ this user cannot write', async () => {
    const dir = await usedDataDir()
    mkdirSync(join(dir, 'blobs', 'ab', 'cd'), { recursive: true })
    chmodSync(dir, 0o777)
    chmodSync(join(dir, 'trawl.db'), 0o666)
    chmodSync(join(dir, 'blobs.db'), 0o666)
    chmodSync(join(dir, 'blobs'), 0o555)
    for (const command of ['serve', 'crawl'] as const) {
      await expectRefused(command, dir, `blobs/ is not writable (permission denied); let this user (uid ${uid}) write the data dir and its files, or choose another data dir ${ELSEWHERE}`, {
        unprivileged: true,
      })
    }
  })

  test.skipIf(!canTestPermissions)('blobs.db this user cannot write', async () => {
    const dir = await usedDataDir()
    chmodSync(dir, 0o777)
    chmodSync(join(dir, 'trawl.db'), 0o666)
    chmodSync(join(dir, 'blobs.db'), 0o444)
    for (const command of ['serve', 'crawl'] as const) {
      await expectRefused(command, dir, `blobs.db is not writable (permission denied); let this user (uid ${uid}) write the data dir and its files, or choose another data dir ${ELSEWHERE}`, {
        unprivileged: true,
      })
    }
  })
})
