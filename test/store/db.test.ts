import { afterAll, describe, expect, test } from 'bun:test'
import { Database } from 'bun:sqlite'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createSqliteRepositories } from '../../src/store'
import { migrate, openDatabase } from '../../src/store/db'
import { migrations } from '../../src/store/migrations'

const dirs: string[] = []
const tempDir = () => {
  const dir = mkdtempSync(join(tmpdir(), 'trawl-db-'))
  dirs.push(dir)
  return dir
}
afterAll(() => dirs.forEach((dir) => rmSync(dir, { recursive: true, force: true })))

/** A trawl.db as version 5 of the schema left it, with tenant t's job j and its running run r (seq 1). */
function version5(dir: string): { raw: Database; run: number } {
  const raw = new Database(join(dir, 'trawl.db'), { create: true, strict: true })
  raw.exec('PRAGMA foreign_keys = ON')
  migrate(raw, 5)
  raw.exec(`INSERT INTO jobs (tenant, id, name, config, labels, created_at, updated_at) VALUES ('t', 'j', 'j', '{}', '{}', 0, 0)`)
  raw.exec(`INSERT INTO runs (tenant, id, job_seq, job_id, config, labels, status, created_at) VALUES ('t', 'r', 1, 'j', '{}', '{}', 'running', 0)`)
  return { raw, run: (raw.query('SELECT seq FROM runs').get() as { seq: number }).seq }
}

describe('openDatabase', () => {
  test('creates the data dir, WAL mode, foreign keys, every migration applied', () => {
    const dir = join(tempDir(), 'nested', 'data')
    const db = openDatabase(dir)
    try {
      expect((db.query('PRAGMA journal_mode').get() as any).journal_mode).toBe('wal')
      expect((db.query('PRAGMA foreign_keys').get() as any).foreign_keys).toBe(1)
      expect((db.query('PRAGMA busy_timeout').get() as any).timeout).toBe(5000)
      // The writer's own checkpoint, which lets the WAL restart beside the checkpoint thread (decision 69).
      expect(db.query('PRAGMA wal_autocheckpoint').get()).toEqual({ wal_autocheckpoint: 16000 })
      expect((db.query('PRAGMA user_version').get() as any).user_version).toBe(migrations.length)
      const tables = (db.query("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").all() as any[]).map((r) => r.name)
      expect(tables).toEqual(expect.arrayContaining(['hosts', 'jobs', 'labels', 'links', 'runs']))
    } finally {
      db.close()
    }
  })

  test('reopening keeps data and applies nothing twice', () => {
    const dir = tempDir()
    const db1 = openDatabase(dir)
    const store = createSqliteRepositories(db1)
    store.jobs.create('t', { id: crypto.randomUUID(), name: 'kept', config: {}, labels: { a: 'b' } })
    db1.close()
    const db2 = openDatabase(dir)
    expect(
      createSqliteRepositories(db2)
        .jobs.list('t', { labels: { a: 'b' } }, undefined, 10)
        .data.map((j) => j.name),
    ).toEqual(['kept'])
    migrate(db2) // idempotent
    expect((db2.query('PRAGMA user_version').get() as any).user_version).toBe(migrations.length)
    db2.close()
  })

  test('006 and 007 keep a version-5 database’s edges (with each parent’s seq range) and frontier (keyed by seq)', () => {
    const dir = tempDir()
    const { raw, run } = version5(dir)
    const edge = raw.query('INSERT INTO edges (run_seq, parent, child, created_at) VALUES (?, ?, ?, 0)')
    for (const [p, c] of [
      ['p1', 'a'],
      ['p1', 'b'],
      ['p2', 'a'],
      ['p2', 'c'],
      ['p2', 'd'],
    ] as const)
      edge.run(run, p, c)
    const url = raw.query("INSERT INTO frontier (run_seq, hash, url, host, depth, parent, state, seq) VALUES (?, ?, ?, 'h', 0, NULL, ?, ?)")
    url.run(run, 'hb', 'http://h/b', 2, 2)
    url.run(run, 'ha', 'http://h/a', 0, 1)
    // As 007 left it: 013 folds edges into their parents' visit rows (page-records.test.ts).
    migrate(raw, 7)
    const db = raw
    expect(db.query('SELECT parent, first_seq, last_seq FROM edge_parents ORDER BY parent').all()).toEqual([
      { parent: 'p1', first_seq: 1, last_seq: 2 },
      { parent: 'p2', first_seq: 3, last_seq: 5 },
    ])
    expect(db.query('SELECT seq, parent, child FROM edges ORDER BY seq').all()).toHaveLength(5)
    // 007: the frontier keyed by seq, rows kept.
    expect(db.query('SELECT seq, hash, state FROM frontier').all()).toEqual([
      { seq: 1, hash: 'ha', state: 0 },
      { seq: 2, hash: 'hb', state: 2 },
    ])
    // Edges go with their run still.
    db.exec(`DELETE FROM runs WHERE seq = ${run}`)
    expect(db.query('SELECT count(*) AS n FROM edges').get()).toEqual({ n: 0 })
    expect(db.query('SELECT count(*) AS n FROM edge_parents').get()).toEqual({ n: 0 })
    expect(db.query('SELECT count(*) AS n FROM frontier').get()).toEqual({ n: 0 })
    db.close()
  })

  test('after 006 and 007, a parent whose old edges were not consecutive gets only its own; runs whose seqs collided keep every URL', () => {
    const dir = tempDir()
    const { raw } = version5(dir)
    raw.exec(`INSERT INTO hosts (tenant, hash, domain, created_at) VALUES ('t', 'h', 'h.example', 0)`)
    // Link hashes are 32 characters (a visit row's children are read 32 at a time): 'p1' stands for p1000….
    const h = (name: string) => name.padEnd(32, '0')
    for (const hash of ['p1', 'p2', 'a', 'b', 'c']) raw.query(`INSERT INTO links (tenant, hash, url, host_seq, created_at) VALUES ('t', ?, ?, 1, 0)`).run(h(hash), `http://h.example/${hash}`)
    // The parents were visited: their visit rows hold their edges since 013.
    for (const p of ['p1', 'p2']) raw.query(`INSERT INTO visits (run_seq, hash, host_hash, depth, status, visited_at) VALUES (1, ?, 'h', 0, 200, 0)`).run(h(p))
    // The old recordEdges took a second call for a parent: p1's edges straddle p2's.
    const edge = raw.query('INSERT INTO edges (run_seq, parent, child, created_at) VALUES (1, ?, ?, 0)')
    for (const [p, c] of [
      ['p1', 'a'],
      ['p2', 'b'],
      ['p1', 'c'],
    ] as const)
      edge.run(h(p), h(c))
    // Two processes that both believed they held the run gave seq 1 to two URLs.
    const url = raw.query("INSERT INTO frontier (run_seq, hash, url, host, depth, parent, state, seq) VALUES (1, ?, ?, 'h', 0, NULL, 0, ?)")
    url.run('x', 'http://h.example/x', 1)
    url.run('y', 'http://h.example/y', 1)
    url.run('z', 'http://h.example/z', 2)
    raw.close()
    const db = openDatabase(dir)
    const store = createSqliteRepositories(db)
    const short = (hash: string) => hash.replace(/0+$/, '')
    const pairs = (hashes: string[]) => store.runGraph.edges('t', 1, { url_hashes: hashes.map(h) }, undefined, 50).data.map((e) => `${short(e.parent.hash)}>${short(e.child.hash)}`)
    expect(pairs(['p1'])).toEqual(['p1>a', 'p1>c'])
    expect(pairs(['p2'])).toEqual(['p2>b'])
    expect(pairs(['c'])).toEqual(['p1>c'])
    expect(db.query('SELECT seq, hash FROM frontier ORDER BY seq').all()).toEqual([
      { seq: 1, hash: 'x' },
      { seq: 2, hash: 'y' },
      { seq: 3, hash: 'z' },
    ])
    db.close()
  })

  test('008 renames artifacts.sha256 to checksum and keeps the stored values', () => {
    const dir = tempDir()
    const raw = new Database(join(dir, 'trawl.db'), { create: true, strict: true })
    migrate(raw, 7)
    const old = 'ab'.repeat(32)
    raw
      .query(
        `INSERT INTO artifacts (tenant, id, run_id, url_hash, blob_key, kind, pipeline_id, content_type, size, sha256, created_at)
       VALUES ('t', 'a1', 'r', 'h', 'k', 'raw', NULL, 'text/html', 3, ?, 0)`,
      )
      .run(old)
    raw.close()
    const db = openDatabase(dir)
    try {
      expect(db.query("SELECT id, checksum FROM artifacts WHERE tenant = 't'").all()).toEqual([{ id: 'a1', checksum: old }])
      const columns = (db.query('PRAGMA table_info(artifacts)').all() as { name: string }[]).map((c) => c.name)
      expect(columns).toContain('checksum')
      expect(columns).not.toContain('sha256')
    } finally {
      db.close()
    }
  })

  test('a database from a newer binary is refused rather than misread', () => {
    const dir = tempDir()
    const raw = new Database(join(dir, 'trawl.db'), { create: true })
    raw.exec(`PRAGMA user_version = ${migrations.length + 1}`)
    raw.close()
    expect(() => openDatabase(dir)).toThrow('newer than this binary')
  })

  test('deleting a job cascades to its runs at the SQL level', () => {
    const dir = tempDir()
    const db = openDatabase(dir)
    try {
      const store = createSqliteRepositories(db)
      const j = store.jobs.create('t', { id: crypto.randomUUID(), name: 'j', config: {}, labels: {} })
      store.runs.create('t', j, { id: crypto.randomUUID(), config: {} })
      expect(store.jobs.delete('t', j.id)).toBe(true)
      expect((db.query('SELECT count(*) AS n FROM runs').get() as any).n).toBe(0)
    } finally {
      db.close()
    }
  })
})
