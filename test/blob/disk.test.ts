import { afterAll, describe, expect, test } from 'bun:test'
import { Database } from 'bun:sqlite'
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { hostname, tmpdir } from 'node:os'
import { join, relative } from 'node:path'
import { DiskBlobStore, type DiskBlobStoreOptions } from '../../src/blob/disk'
import { openBlobStore } from '../../src/blob'
import { bodyOf, crashBody, failingStream, readAll, checksumOf, streamOf } from './bodies'
import { blobStoreContract, expectBlobError } from './contract'

const dirs: string[] = []
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true })
})
function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'trawl-blob-'))
  dirs.push(d)
  return d
}

const MAX = 8 * 1024 * 1024
blobStoreContract('disk', async () => {
  const dir = tempDir()
  const store = new DiskBlobStore(dir, { maxBytes: MAX })
  return {
    store,
    maxBytes: MAX,
    async cleanup() {
      await store.close()
      rmSync(dir, { recursive: true, force: true })
    },
  }
})

/** Every file under `<dir>/blobs`, relative to it. */
function blobFiles(dir: string): string[] {
  const root = join(dir, 'blobs')
  const out: string[] = []
  const walk = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      if (e.isDirectory()) walk(join(d, e.name))
      else out.push(relative(root, join(d, e.name)))
    }
  }
  try {
    walk(root)
  } catch {}
  return out
}
const temps = (dir: string) => blobFiles(dir).filter((f) => f.split('/').pop()!.startsWith('.tmp-'))

type Row = { key: string; size: number; checksum: string; file: string | null; body: Uint8Array | null }
/** The row of `key`, read through a second connection (WAL lets it see committed data). */
function rowOf(dir: string, key: string): Row | null {
  const db = new Database(join(dir, 'blobs.db'), { readonly: true })
  try {
    return db.query('SELECT key, size, checksum, file, body FROM blobs WHERE key = ?').get(key) as Row | null
  } finally {
    db.close()
  }
}

async function withStore<T>(opts: DiskBlobStoreOptions, fn: (s: DiskBlobStore, dir: string) => Promise<T>, dir = tempDir()): Promise<T> {
  const store = new DiskBlobStore(dir, opts)
  try {
    return await fn(store, dir)
  } finally {
    await store.close()
  }
}

const openFds = () => readdirSync('/proc/self/fd').length

describe('DiskBlobStore layout', () => {
  test('blobs.db is a separate WAL database in the data dir, created with it', async () => {
    const dir = join(tempDir(), 'nested', 'data')
    await withStore(
      {},
      async (store) => {
        const db = new Database(join(dir, 'blobs.db'), { readonly: true })
        expect((db.query('PRAGMA journal_mode').get() as { journal_mode: string }).journal_mode).toBe('wal')
        db.close()
        // Per connection, so asked of the store's own: the checkpoint that lets the WAL restart
        // beside the checkpoint thread (decision 69).
        const own = (store as unknown as { db: Database }).db
        expect(own.query('PRAGMA wal_autocheckpoint').get()).toEqual({ wal_autocheckpoint: 16000 })
      },
      dir,
    )
  })

  test('a version-1 blobs.db (column sha256) opens with its rows, their hashes kept as checksums', async () => {
    const dir = tempDir()
    const raw = new Database(join(dir, 'blobs.db'), { create: true, strict: true })
    raw.exec(`CREATE TABLE blobs (key TEXT PRIMARY KEY, size INTEGER NOT NULL, sha256 TEXT NOT NULL, content_type TEXT NOT NULL,
      file TEXT, body BLOB, CHECK ((file IS NULL) <> (body IS NULL)))`)
    raw.exec('CREATE INDEX blobs_by_file ON blobs (file) WHERE file IS NOT NULL')
    const body = bodyOf(9, 100)
    const old = Bun.SHA256.hash(body, 'hex')
    raw.query("INSERT INTO blobs (key, size, sha256, content_type, file, body) VALUES ('t/old', 100, ?, 'a/b', NULL, ?)").run(old, body)
    raw.exec('PRAGMA user_version = 1')
    raw.close()
    // A process of the old version (which never enters itself as an opener) may be writing this.
    const shard = join(dir, 'blobs', 'ab', 'cd')
    mkdirSync(shard, { recursive: true })
    writeFileSync(join(shard, '.tmp-0ldw0rk'), 'an old process writing')
    await withStore(
      {},
      async (store) => {
        expect(store.swept).toEqual({ temps: 0, orphans: 0 })
        expect(await store.head('t/old')).toEqual({ size: 100, checksum: old, contentType: 'a/b' })
        expect(await readAll((await store.get('t/old'))!.stream)).toEqual(body)
        expect(await store.put('t/new', body, 'a/b')).toEqual({ size: 100, checksum: checksumOf(body), contentType: 'a/b' })
      },
      dir,
    )
    expect(rowOf(dir, 't/new')!.checksum).toBe(checksumOf(body))
    const db = new Database(join(dir, 'blobs.db'), { readonly: true })
    expect(db.query('PRAGMA user_version').get()).toEqual({ user_version: 3 })
    expect(db.query("SELECT name FROM sqlite_master WHERE type = 'index' AND name = 'blobs_by_file'").all()).toEqual([{ name: 'blobs_by_file' }])
    // Version 3's openers: the store left no row behind when it closed.
    expect(db.query('SELECT count(*) AS n FROM openers').get()).toEqual({ n: 0 })
    db.close()
    // The next open, of a version-3 file, sweeps as usual.
    const again = new DiskBlobStore(dir)
    expect(again.swept).toEqual({ temps: 1, orphans: 0 })
    await again.close()
  })

  test('bodies up to inlineMax are rows with the body and no file; one byte more is a file', async () => {
    await withStore({ inlineMax: 1000 }, async (store, dir) => {
      await store.put('t/small', bodyOf(1, 1000), 'text/html')
      const small = rowOf(dir, 't/small')!
      expect(small.file).toBeNull()
      expect(small.body).toEqual(bodyOf(1, 1000))
      expect(blobFiles(dir)).toEqual([])

      await store.put('t/large', bodyOf(2, 1001), 'text/html')
      const large = rowOf(dir, 't/large')!
      expect(large.body).toBeNull()
      expect(large.size).toBe(1001)
      expect(large.checksum).toBe(checksumOf(bodyOf(2, 1001)))
      expect(blobFiles(dir)).toEqual([large.file!])
      expect(checksumOf(readFileSync(join(dir, 'blobs', large.file!)))).toBe(checksumOf(bodyOf(2, 1001)))
    })
  })

  test('the default inlineMax is 256 KiB, and file shards come from the key', async () => {
    await withStore({}, async (store, dir) => {
      await store.put('t/at', new Uint8Array(256 * 1024), 'x/y')
      await store.put('t/over', new Uint8Array(256 * 1024 + 1), 'x/y')
      expect(rowOf(dir, 't/at')!.file).toBeNull()
      const h = Bun.SHA256.hash('t/over', 'hex') // file names shard by the key's SHA-256
      expect(rowOf(dir, 't/over')!.file).toStartWith(`${h.slice(0, 2)}/${h.slice(2, 4)}/`)
    })
  })

  test('a stream stays inline under inlineMax and becomes a file past it; no temp files remain', async () => {
    await withStore({ inlineMax: 10_000 }, async (store, dir) => {
      await store.put('t/s1', streamOf(bodyOf(3, 10_000), 999), 'a/b')
      await store.put('t/s2', streamOf(bodyOf(4, 10_001), 999), 'a/b')
      await store.put('t/s3', bodyOf(5, 3_000_000), 'a/b')
      expect(rowOf(dir, 't/s1')!.file).toBeNull()
      expect(rowOf(dir, 't/s2')!.file).not.toBeNull()
      expect(blobFiles(dir)).toHaveLength(2)
      expect(temps(dir)).toEqual([])
      expect(await readAll((await store.get('t/s2'))!.stream)).toEqual(bodyOf(4, 10_001))
    })
  })

  test('replacing or deleting a file blob removes the old file', async () => {
    await withStore({ inlineMax: 100 }, async (store, dir) => {
      await store.put('t/r', bodyOf(1, 500), 'a/b')
      const first = rowOf(dir, 't/r')!.file!
      await store.put('t/r', bodyOf(2, 600), 'a/b')
      const second = rowOf(dir, 't/r')!.file!
      expect(second).not.toBe(first)
      expect(blobFiles(dir)).toEqual([second])
      await store.put('t/r', bodyOf(3, 50), 'a/b') // now inline
      expect(blobFiles(dir)).toEqual([])
      await store.put('t/r', bodyOf(4, 700), 'a/b')
      expect(blobFiles(dir)).toHaveLength(1)
      expect(await store.delete('t/r')).toBe(true)
      expect(blobFiles(dir)).toEqual([])
      expect(rowOf(dir, 't/r')).toBeNull()
    })
  })

  test('too_large and failed streams leave no temp file and no row', async () => {
    await withStore({ inlineMax: 1000, maxBytes: 100_000 }, async (store, dir) => {
      await expectBlobError(store.put('t/x', streamOf(new Uint8Array(100_001), 10_000), 'a/b'), 'too_large')
      await expectBlobError(store.put('t/x', new Uint8Array(100_001), 'a/b'), 'too_large')
      await expectBlobError(store.put('t/x', failingStream(50_000, 5000), 'a/b'), 'io')
      expect(temps(dir)).toEqual([])
      expect(blobFiles(dir)).toEqual([])
      expect(rowOf(dir, 't/x')).toBeNull()
    })
  })
})

test('options out of range are refused at construction', () => {
  expect(() => new DiskBlobStore(tempDir(), { inlineMax: -1 })).toThrow(RangeError)
  expect(() => new DiskBlobStore(tempDir(), { inlineMax: 65 * 1024 * 1024 })).toThrow(RangeError)
  expect(() => new DiskBlobStore(tempDir(), { maxBytes: Number.NaN })).toThrow(RangeError)
})

describe('DiskBlobStore reads', () => {
  test('a file stream keeps reading the version it opened after a replace and a delete', async () => {
    await withStore({ inlineMax: 100 }, async (store) => {
      await store.put('t/v', bodyOf(1, 2_000_000), 'a/b')
      const got = (await store.get('t/v'))!
      await store.put('t/v', bodyOf(2, 300), 'a/b')
      await store.delete('t/v')
      expect(await readAll(got.stream)).toEqual(bodyOf(1, 2_000_000))
    })
  })

  test('file streams release their descriptor when read to the end or cancelled', async () => {
    await withStore({ inlineMax: 100 }, async (store) => {
      await store.put('t/fd', bodyOf(1, 1_000_000), 'a/b')
      const before = openFds()
      for (let i = 0; i < 20; i++) await readAll((await store.get('t/fd'))!.stream)
      for (let i = 0; i < 20; i++) await (await store.get('t/fd'))!.stream.cancel()
      for (let i = 0; i < 20; i++) {
        const reader = (await store.get('t/fd'))!.stream.getReader()
        await reader.read()
        await reader.cancel()
      }
      expect(openFds()).toBeLessThanOrEqual(before)
    })
  })
})

describe('DiskBlobStore batching and durability', () => {
  test('200 concurrent small puts share a few transactions and are all there after reopen', async () => {
    const dir = tempDir()
    await withStore(
      {},
      async (store) => {
        const before = store.stats
        const infos = await Promise.all(Array.from({ length: 200 }, (_, i) => store.put(`t/b/${i}`, bodyOf(i, 3000), 'text/html')))
        const after = store.stats
        expect(after.ops - before.ops).toBe(200)
        expect(after.commits - before.commits).toBeLessThanOrEqual(8)
        expect(infos.every((info, i) => info.checksum === checksumOf(bodyOf(i, 3000)))).toBe(true)
      },
      dir,
    )
    await withStore(
      {},
      async (store) => {
        for (let i = 0; i < 200; i++) expect(await readAll((await store.get(`t/b/${i}`))!.stream)).toEqual(bodyOf(i, 3000))
      },
      dir,
    )
  })

  test('puts arriving over several event-loop turns still batch; a lone awaited put commits at once', async () => {
    await withStore({ batchWaitMs: 50 }, async (store) => {
      const s0 = store.stats
      // Workers that each put, then yield a turn, like fetches completing one after another.
      await Promise.all(
        Array.from({ length: 16 }, async (_, w) => {
          for (let i = 0; i < 10; i++) {
            await new Promise((r) => setImmediate(r))
            await store.put(`t/w/${w}/${i}`, bodyOf(i, 100), 'a/b')
          }
        }),
      )
      const s1 = store.stats
      expect(s1.ops - s0.ops).toBe(160)
      expect(s1.commits - s0.commits).toBeLessThan(40)
      const t0 = performance.now()
      for (let i = 0; i < 20; i++) await store.put(`t/seq/${i}`, bodyOf(i, 100), 'a/b')
      // No fixed wait per commit: 20 sequential puts take far less than 20 × batchWaitMs (1 s).
      expect(performance.now() - t0).toBeLessThan(500)
      expect(store.stats.commits - s1.commits).toBe(20)
    })
  })

  test('a put and a delete of one key in the same batch apply in call order', async () => {
    await withStore({}, async (store) => {
      const [, deleted] = await Promise.all([store.put('t/o', bodyOf(1, 10), 'a/b'), store.delete('t/o')])
      expect(deleted).toBe(true)
      expect(await store.head('t/o')).toBeNull()
      await Promise.all([store.delete('t/o2'), store.put('t/o2', bodyOf(1, 10), 'a/b')])
      expect(await store.head('t/o2')).not.toBeNull()
      // A large put and a small one of the same key, called in that order: the later call wins.
      const [big, small] = [bodyOf(2, 200_000), bodyOf(3, 10)]
      await Promise.all([store.put('t/o3', big, 'a/big'), store.put('t/o3', small, 'a/small'), store.delete('t/o4'), store.put('t/o4', big, 'a/big')])
      expect(await store.head('t/o3')).toEqual({ size: 10, checksum: checksumOf(small), contentType: 'a/small' })
      expect(await readAll((await store.get('t/o3'))!.stream)).toEqual(small)
      expect(await store.head('t/o4')).toEqual({ size: 200_000, checksum: checksumOf(big), contentType: 'a/big' })
    })
  })

  /** A temp file and a file no row names, in one shard of `dir`'s blobs/ (what a write cut short leaves). */
  function plantOrphans(dir: string, temp: string, renamed: string) {
    const shard = join(dir, 'blobs', 'ab', 'cd')
    mkdirSync(shard, { recursive: true })
    writeFileSync(join(shard, '.tmp-deadbeef'), temp)
    writeFileSync(join(shard, '0123456789abcdef0123-00ff00ff00ff00ff'), renamed)
  }

  test('opening removes temp files and files no row points at, and keeps referenced ones', async () => {
    const dir = tempDir()
    let kept = ''
    await withStore(
      { inlineMax: 10 },
      async (store) => {
        await store.put('t/keep', bodyOf(1, 100), 'a/b')
        kept = rowOf(dir, 't/keep')!.file!
      },
      dir,
    )
    plantOrphans(dir, 'partial', 'renamed, never committed')
    const store = new DiskBlobStore(dir, { inlineMax: 10 })
    expect(store.swept).toEqual({ temps: 1, orphans: 1 })
    expect(blobFiles(dir)).toEqual([kept])
    expect(await readAll((await store.get('t/keep'))!.stream)).toEqual(bodyOf(1, 100))
    await store.close()
  })

  test('a store opened while another is open sweeps nothing (the other may be writing those files); the next one alone does', async () => {
    const dir = tempDir()
    const first = new DiskBlobStore(dir, { inlineMax: 10 })
    // What the first store has under way: a temp file being written, a file renamed and not yet committed.
    plantOrphans(dir, 'being written', 'renamed, commit coming')
    const second = new DiskBlobStore(dir, { inlineMax: 10 })
    expect(second.swept).toEqual({ temps: 0, orphans: 0 })
    expect(blobFiles(dir)).toHaveLength(2)
    await second.close()
    await first.close()
    const third = new DiskBlobStore(dir, { inlineMax: 10 })
    expect(third.swept).toEqual({ temps: 1, orphans: 1 })
    expect(blobFiles(dir)).toEqual([])
    await third.close()
  })

  test('openers that are gone (a pid that died, another host, this pid before a container restart) do not stop the sweep, and are removed', async () => {
    const dir = tempDir()
    await withStore({}, async () => {}, dir)
    const dead = Bun.spawnSync(['true']).pid // exited: its pid is free
    const db = new Database(join(dir, 'blobs.db'), { strict: true })
    db.query('INSERT INTO openers (owner, opened_at) VALUES (?, 0), (?, 0), (?, 0)').run(
      `${hostname()}:${dead}:x`,
      `elsewhere.example:${process.pid}:y`,
      `${hostname()}:${process.pid}:z`, // this pid, but not written by this process
    )
    db.close()
    const shard = join(dir, 'blobs', 'ab', 'cd')
    mkdirSync(shard, { recursive: true })
    writeFileSync(join(shard, '.tmp-deadbeef'), 'left by the dead one')
    const store = new DiskBlobStore(dir)
    expect(store.swept).toEqual({ temps: 1, orphans: 0 })
    const check = new Database(join(dir, 'blobs.db'), { readonly: true })
    expect((check.query('SELECT owner FROM openers').all() as { owner: string }[]).map((r) => r.owner.split(':').slice(0, 2).join(':'))).toEqual([`${hostname()}:${process.pid}`])
    check.close()
    await store.close()
  })

  test('kill -9 mid-write loses no acknowledged blob and leaves nothing half-written', async () => {
    const dir = tempDir()
    const acked = new Set<number>()
    let start = 0
    for (const killAfter of [30, 120, 250]) {
      const child = Bun.spawn([process.execPath, join(import.meta.dir, 'crash-child.ts'), dir, String(start)], {
        stdout: 'pipe',
        stderr: 'inherit',
      })
      let seen = 0
      let buffer = ''
      const decoder = new TextDecoder()
      for await (const chunk of child.stdout) {
        buffer += decoder.decode(chunk, { stream: true })
        const lines = buffer.split('\n')
        buffer = lines.pop()!
        for (const line of lines) {
          acked.add(Number(line.slice('acked '.length)))
          seen++
        }
        if (seen >= killAfter) child.kill('SIGKILL')
      }
      expect(await child.exited).not.toBe(0)
      start += 100_000

      const store = new DiskBlobStore(dir)
      try {
        for (const n of acked) {
          const got = await store.get(`t/crash/${n}`)
          expect(got).not.toBeNull()
          const bytes = await readAll(got!.stream)
          expect(bytes).toEqual(crashBody(n))
          expect(got!.info.checksum).toBe(checksumOf(bytes))
        }
        // Blobs committed but not yet acknowledged may exist too, but only whole.
        const db = new Database(join(dir, 'blobs.db'), { readonly: true })
        const rows = db.query('SELECT key, size, file FROM blobs').all() as { key: string; size: number; file: string | null }[]
        db.close()
        for (const row of rows) {
          expect(row.size).toBe(crashBody(Number(row.key.split('/').pop())).byteLength)
          if (row.file) expect(statSync(join(dir, 'blobs', row.file)).size).toBe(row.size)
        }
        expect(temps(dir)).toEqual([])
        expect(blobFiles(dir).length).toBe(rows.filter((r) => r.file).length)
      } finally {
        await store.close()
      }
    }
    expect(acked.size).toBeGreaterThanOrEqual(400)
  }, 30_000)
})

test('openBlobStore gives a disk store under the data dir', async () => {
  const dir = tempDir()
  const store = openBlobStore(dir)
  expect(store).toBeInstanceOf(DiskBlobStore)
  await store.put('t/i', bodyOf(1, 10), 'a/b')
  await store.close()
  expect(statSync(join(dir, 'blobs.db')).isFile()).toBe(true)
})
