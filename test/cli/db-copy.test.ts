// `trawl db copy` through the compiled binary: a data dir made by `trawl crawl` against a fixture
// site (bodies on disk, one large enough to be a file under blobs/, and one data dir whose bodies
// are in S3), copied into a throwaway PostgreSQL database and a real S3-compatible server
// (s3rver), then held against the source: every table's rows, the identities, the bodies and
// their index rows, and `trawl export` of each run, byte for byte, read back through the
// PostgreSQL engine. Refusals: a database that holds rows, one that cannot be reached (its
// password never printed), a run being crawled, bodies with nowhere to go.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { Database } from 'bun:sqlite'
import { SQL } from 'bun'
import { cpSync } from 'node:fs'
import { join } from 'node:path'
import { openBlobStore } from '../../src/blob'
import { numeric } from '../../src/store/postgres/pg'
import { TABLES } from '../../src/store/copy/tables'
import { cleanup, ensureBinary, runBinary, tempDir } from '../helpers/binary'
import { unusedPort } from '../helpers/fixture-site'
import { clusterPort, freshDatabase } from '../helpers/postgres'
import { startS3Server, type S3TestServer } from '../helpers/s3-server'

let s3: S3TestServer
let site: ReturnType<typeof Bun.serve>
const clients: SQL[] = []

beforeAll(async () => {
  await ensureBinary()
  s3 = await startS3Server(['copy-src', 'copy-dest'])
  site = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: page })
}, 120_000)
afterAll(async () => {
  await Promise.all(clients.map((c) => c.close()))
  site?.stop(true)
  await s3?.stop()
  await cleanup()
})

/**
 * A small site: / links to ten pages and /big; each page has text a COPY must escape
 * (backslashes, a tab) and links on; /big is over the disk store's 256 KiB inline limit, so its
 * body is a file under blobs/, and over S3's 5 MiB part, so it goes up in parts.
 */
function page(req: Request): Response {
  const path = new URL(req.url).pathname
  const html = (title: string, body: string) =>
    new Response(`<!doctype html><html><head><title>${title}</title></head><body>${body}</body></html>`, { headers: { 'content-type': 'text/html; charset=utf-8' } })
  if (path === '/robots.txt') return new Response('User-agent: *\nAllow: /\n', { headers: { 'content-type': 'text/plain' } })
  if (path === '/') return html('home', ['<h1>home</h1>', ...Array.from({ length: 10 }, (_, i) => `<a href="/p/${i}">page ${i}</a>`), '<a href="/big">big</a>'].join('\n'))
  if (path === '/big') return html('big', `<h1>big</h1>${'<p>the same paragraph, many times over</p>\n'.repeat(130_000)}`)
  const m = /^\/p\/(\d+)$/.exec(path)
  if (m) return html(`page ${m[1]}`, `<h1>page ${m[1]}</h1><p>C:\\temp\\file ${m[1]}\tand a tab</p><a href="/p/${(Number(m[1]) + 1) % 10}">next</a> <a href="/">home</a>`)
  return new Response('not here', { status: 404 })
}

const S3_KEYS = { AWS_ACCESS_KEY_ID: 'S3RVER', AWS_SECRET_ACCESS_KEY: 'S3RVER', AWS_REGION: 'us-east-1' }
const s3Env = (extra: Record<string, string> = {}) => ({ TRAWL_S3_ENDPOINT: s3.endpoint, ...S3_KEYS, ...extra })

async function crawl(dataDir: string, env: Record<string, string> = {}, args: string[] = []): Promise<void> {
  const r = await runBinary(['crawl', `http://127.0.0.1:${site.port}/`, '--data-dir', dataDir, ...args], env, 30_000)
  expect(r.code, r.stderr).toBe(0)
}

/** Rows the crawl does not make: the tables it leaves empty, and text and numbers at the edges of what COPY's text format carries. */
function addEdgeRows(dataDir: string): void {
  const db = new Database(join(dataDir, 'trawl.db'))
  try {
    const job = db.query('SELECT seq, id FROM jobs ORDER BY seq LIMIT 1').get() as { seq: number; id: string }
    const run = db.query('SELECT seq FROM runs ORDER BY seq LIMIT 1').get() as { seq: number }
    db.run("INSERT INTO labels (kind, tenant, key, value, ref) VALUES (1, 'local', 'tab\tkey', 'back\\slash\nnew line\r\n', 1)")
    db.run(`INSERT INTO pattern_sets (tenant, id, host_seq, category, format, patterns, created_at, updated_at) VALUES ('local', 'ps-1', 1, 'docs', 'regex', '["\\\\d+\\\\.html"]', 1, 2)`)
    db.run(`INSERT INTO data_maps (tenant, id, host_seq, schema_id, map, created_at, updated_at) VALUES ('local', 'dm-1', 1, 'product', '{"fields":[{"name":"t\\tit","selector":"h1"}]}', 3, 4)`)
    db.run(
      "INSERT INTO triggers (tenant, id, job_seq, job_id, name, kind, params, delay_ms, enabled, created_at, next_at) VALUES ('local', 'tr-1', ?, ?, 'after', 'on_finish', '{\"delay\":\"1s\"}', 1000, 1, 5, NULL)",
      [job.seq, job.id],
    )
    db.run("INSERT INTO trigger_executions (tenant, id, trigger_seq, trigger_id, run_id, outcome, scheduled_at, executed_at, created_at) VALUES ('local', 'te-1', 1, 'tr-1', NULL, 'skipped', 6, 7, 8)")
    db.run('INSERT INTO trigger_firings (trigger_seq, run_seq, due_at) VALUES (1, ?, 9)', [run.seq])
    db.run(
      "INSERT INTO payments (key, payer, amount, network, version, status, payload, requirements, valid_before, resource, settle_tx, settle_error, created_at, updated_at) VALUES ('k-1', '0xabc', '115792089237316195423570985008687907853269984665640564039457584007913129639935', 'base-sepolia', 2, 'settle_failed', '{}', '{}', 9007199254740992, '/v1/scrape', NULL, ?, 10, 11)",
      ['a NUL\0inside'],
    )
    db.run("INSERT INTO body_deletions (run_id, requested_at) VALUES ('00000000-0000-4000-8000-000000000000', 12)")
    // A webhook, and an execution after it: SQLite's trigger writes its delivery. Copied after the
    // executions, PostgreSQL's writes none of its own (the copy would have one row too many).
    db.run(
      `INSERT INTO webhooks (tenant, id, job_seq, job_id, url, secret, events, enabled, description, created_at, updated_at) VALUES ('local', 'wh-1', NULL, NULL, 'https://hooks.example/in', 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', '["trigger.fired"]', 1, 'tab\there', 13, 14)`,
    )
    db.run(
      "INSERT INTO trigger_executions (tenant, id, trigger_seq, trigger_id, run_id, outcome, scheduled_at, executed_at, created_at) VALUES ('local', 'te-2', 1, 'tr-1', NULL, 'skipped', 15, 16, 17)",
    )
    db.run("INSERT INTO webhook_attempts (delivery_seq, at, duration_ms, status_code, error) SELECT seq, 18, 3, NULL, 'connection refused' FROM webhook_deliveries")
    db.run('UPDATE crawl_logs SET latency_ms = 0.1 + 0.2 WHERE seq = (SELECT min(seq) FROM crawl_logs)')
  } finally {
    db.close()
  }
}

const sorted = (rows: unknown[]) => rows.map((r) => JSON.stringify(Object.fromEntries(Object.entries(r as object).sort(([a], [b]) => a.localeCompare(b))))).sort()

function sqliteRows(dataDir: string, table: string, file = 'trawl.db'): unknown[] {
  const db = new Database(join(dataDir, file))
  try {
    return db.query(`SELECT * FROM ${table}`).all()
  } finally {
    db.close()
  }
}

function client(url: string): SQL {
  const c = new SQL(url, { max: 2 })
  clients.push(c)
  return c
}

const pgRows = async (sql: SQL, table: string) => numeric<Record<string, unknown>>(await sql.unsafe(`SELECT * FROM ${table}`))

/** Every run id of a data dir, oldest first. */
const runIds = (dataDir: string) => (sqliteRows(dataDir, 'runs') as { seq: number; id: string }[]).sort((a, b) => a.seq - b.seq).map((r) => r.id)

async function copy(dataDir: string, url: string, env: Record<string, string>, args: string[] = []) {
  return runBinary(['db', 'copy', '--to', url, '--data-dir', dataDir, ...args], env, 60_000)
}

/** Each run's export (JSONL and llms) from the data dir, and from the copy through the PostgreSQL engine: byte for byte the same. */
async function expectSameExports(dataDir: string, sourceEnv: Record<string, string>, url: string, blobUrl: string) {
  const copied = { ...s3Env(), TRAWL_DATABASE_URL: url, TRAWL_BLOB_URL: blobUrl }
  for (const runId of runIds(dataDir)) {
    for (const format of ['jsonl', 'llms']) {
      const before = await runBinary(['export', runId, '--format', format, '--data-dir', dataDir], sourceEnv, 30_000)
      const after = await runBinary(['export', runId, '--format', format, '--data-dir', tempDir()], copied, 30_000)
      expect(before.code, before.stderr).toBe(0)
      expect(after.code, after.stderr).toBe(0)
      expect(before.stdout.length).toBeGreaterThan(1_000)
      expect(after.stdout === before.stdout, `${format} export of run ${runId} differs`).toBe(true)
    }
  }
}

describe('trawl db copy', () => {
  let diskDir: string
  let copiedUrl: string

  test('copies every table with its seqs, and the bodies on disk into S3 with their index rows; each export is byte-identical', async () => {
    diskDir = tempDir()
    await crawl(diskDir)
    await crawl(diskDir, {}, ['--max-urls', '4'])
    addEdgeRows(diskDir)
    // A database created empty: the copy migrates it first.
    copiedUrl = freshDatabase({ migrated: false })
    const r = await copy(diskDir, copiedUrl, s3Env(), ['--blobs', 's3://copy-dest/moved'])
    expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: '' })

    const lines = r.stdout.trimEnd().split('\n')
    expect(lines.slice(0, TABLES.length).map((l) => l.split(':')[0])).toEqual([...TABLES])
    expect(lines.at(-1)).toMatch(
      /^copied .* to postgres:\/\/trawl@127\.0\.0\.1:\d+\/\w+: [\d,]+ rows in 20 tables; [\d,]+ bodies \(.*\) to s3:\/\/copy-dest\/moved\/; 1 NUL character in text replaced by U\+FFFD .*; [\d.]+ s$/,
    )

    const sql = client(copiedUrl)
    for (const table of TABLES) {
      const source = sqliteRows(diskDir, table)
      if (table === 'payments') for (const p of source as { settle_error: string | null }[]) p.settle_error = p.settle_error?.replace('\0', '\uFFFD') ?? null
      // Columns only PostgreSQL has (a host queue's holder, …) are a cluster's state, not the data dir's: left out.
      const columns = source.length ? Object.keys(source[0] as object) : []
      const target = (await pgRows(sql, table)).map((row) => Object.fromEntries(columns.map((c) => [c, row[c]])))
      expect(target.length, `${table} rows`).toBe(source.length)
      expect(sorted(target), table).toEqual(sorted(source))
    }
    expect(sqliteRows(diskDir, 'visits').length).toBeGreaterThan(10)

    // Each identity continues after the largest seq copied, as SQLite's would.
    for (const table of TABLES.filter((t) => !['labels', 'run_hosts', 'frontier', 'body_deletions'].includes(t))) {
      const [row] = numeric<{ max: number | null; next: number }>(await sql.unsafe(`SELECT (SELECT max(seq) FROM ${table}) AS max, nextval(pg_get_serial_sequence('${table}', 'seq')) AS next`))
      expect(row!.next, table).toBe((row!.max ?? 0) + 1)
    }
    // PostgreSQL numbers every run's frontier from one sequence, when its schema has it.
    if (numeric<{ has: boolean }>(await sql`SELECT to_regclass('frontier_seq') IS NOT NULL AS has`)[0]!.has) {
      const [row] = numeric<{ max: number; next: number }>(await sql`SELECT (SELECT max(seq) FROM frontier) AS max, nextval('frontier_seq') AS next`)
      expect(row!.next).toBe(row!.max + 1)
    }

    // Every body an artifact names is in the bucket, byte for byte, with its index row.
    const keys = [...new Set((sqliteRows(diskDir, 'artifacts') as { blob_key: string }[]).map((a) => a.blob_key))].sort()
    const blobRows = sqliteRows(diskDir, 'blobs', 'blobs.db') as { key: string; size: number; checksum: string; content_type: string; file: string | null }[]
    expect(blobRows.some((b) => b.file !== null && b.size > 5 * 1024 * 1024 && keys.includes(b.key))).toBe(true) // /big: a file, uploaded in parts
    expect(await s3.keys('moved/', 'copy-dest')).toEqual(keys.map((k) => `moved/${k}`))
    const index = await pgRows(sql, 's3_objects')
    expect(sorted(index)).toEqual(
      sorted(blobRows.filter((b) => keys.includes(b.key)).map((b) => ({ name: `copy-dest/moved/${b.key}`, size: b.size, checksum: b.checksum, content_type: b.content_type }))),
    )
    const disk = openBlobStore(diskDir)
    try {
      for (const key of keys) {
        const body = new Uint8Array(await new Response((await disk.get(key))!.stream).arrayBuffer())
        expect(Buffer.from(await s3.client('copy-dest').file(`moved/${key}`).arrayBuffer()).equals(body), key).toBe(true)
      }
    } finally {
      await disk.close()
    }

    await expectSameExports(diskDir, {}, copiedUrl, 's3://copy-dest/moved')
  }, 180_000)

  test('a data dir whose bodies are in S3 already: the index rows are copied, the objects stay where they are', async () => {
    const dir = tempDir()
    const written = s3Env({ TRAWL_BLOB_URL: 's3://copy-src/kept' })
    await crawl(dir, written, ['--exclude', '/big$'])
    const objects = await s3.keys('', 'copy-src')
    const url = freshDatabase()
    const r = await copy(dir, url, written)
    expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: '' })
    expect(r.stdout).toContain('s3_objects: ')
    expect(r.stdout.trimEnd().split('\n').at(-1)).toContain(' index rows of the bodies already in s3://copy-src/kept/')
    expect(await s3.keys('', 'copy-src')).toEqual(objects)
    expect(sorted(await pgRows(client(url), 's3_objects'))).toEqual(sorted(sqliteRows(dir, 'objects', 'blobs-s3.db')))
    await expectSameExports(dir, written, url, 's3://copy-src/kept')
  }, 120_000)

  test('a database that already holds rows is refused in one line, exit 2, and left as it was', async () => {
    const sql = client(copiedUrl)
    const before = numeric<{ n: number }>(await sql`SELECT count(*) AS n FROM visits`)[0]!.n
    const r = await copy(diskDir, copiedUrl, s3Env(), ['--blobs', 's3://copy-dest/again'])
    expect(r.code).toBe(2)
    expect(r.stdout).toBe('')
    expect(r.stderr).toMatch(/^trawl: --to: postgres:\/\/trawl@127\.0\.0\.1:\d+\/\w+ already holds rows \(table hosts\); trawl db copy copies into an empty database only[^\n]*\n$/)
    expect(numeric<{ n: number }>(await sql`SELECT count(*) AS n FROM visits`)[0]!.n).toBe(before)
    expect(await s3.keys('again/', 'copy-dest')).toEqual([])
  }, 60_000)

  test('a database that cannot be reached is refused in one line, exit 2, without its password', async () => {
    const secret = 'n0t-To-be-Printed'
    for (const url of [`postgres://trawl:${secret}@127.0.0.1:${unusedPort()}/trawl`, `postgres://trawl:${secret}@127.0.0.1:${clusterPort()}/no_such_database`]) {
      const r = await copy(diskDir, url, s3Env(), ['--blobs', 's3://copy-dest/never'])
      expect(r.code).toBe(2)
      expect(r.stdout).toBe('')
      expect(r.stderr).toMatch(/^trawl: --to: postgres:\/\/trawl:\*\*\*@127\.0\.0\.1:\d+\/\w+ cannot be used: [^\n]+\n$/)
      expect(r.stderr).not.toContain(secret)
    }
  }, 60_000)

  test('a run being crawled is refused unless --force; bodies on disk need a bucket that is there', async () => {
    const dir = tempDir()
    cpSync(diskDir, dir, { recursive: true })
    const db = new Database(join(dir, 'trawl.db'))
    db.run("UPDATE runs SET status = 'running', lease_owner = 'another-host:1:abcd1234', lease_until = ? WHERE seq = (SELECT max(seq) FROM runs)", [Date.now() + 600_000])
    db.close()
    const held = await copy(dir, freshDatabase(), s3Env(), ['--blobs', 's3://copy-dest/held'])
    expect(held.code).toBe(2)
    expect(held.stderr).toMatch(/^trawl: data dir .* has a run being crawled \(run [0-9a-f-]{36} of tenant local, by another-host:1:abcd1234\): .* --force [^\n]*\n$/)
    const forced = await copy(dir, freshDatabase(), s3Env(), ['--blobs', 's3://copy-dest/held', '--force'])
    expect({ code: forced.code, stderr: forced.stderr }).toEqual({ code: 0, stderr: '' })

    // A bucket that is not there is found before the database is touched: it is not even migrated.
    const bare = freshDatabase({ migrated: false })
    const noBucket = await copy(diskDir, bare, s3Env(), ['--blobs', 's3://no-such-bucket/x'])
    expect(noBucket.code).toBe(2)
    expect(noBucket.stderr).toMatch(/^trawl: --blobs: s3:\/\/no-such-bucket\/x\/ cannot be used: NoSuchBucket[^\n]*\n$/)
    expect(await client(bare)`SELECT table_name FROM information_schema.tables WHERE table_schema = 'public'`).toHaveLength(0)

    const nowhere = await copy(diskDir, freshDatabase(), s3Env())
    expect(nowhere.code).toBe(2)
    expect(nowhere.stderr).toMatch(/^trawl: --blobs: needed, as .* keeps its \d+ bodies on disk [^\n]*\n$/)
  }, 60_000)

  test('usage errors: no subcommand, no --to, no data dir', async () => {
    const none = await runBinary(['db'])
    expect({ code: none.code, stderr: none.stderr.split('\n').length }).toEqual({ code: 2, stderr: 2 })
    expect(none.stderr).toStartWith('trawl: db needs a subcommand: trawl db copy --to ')
    const noTo = await runBinary(['db', 'copy', '--data-dir', diskDir])
    expect(noTo.code).toBe(2)
    expect(noTo.stderr).toStartWith('trawl: --to: needed')
    const missing = join(tempDir(), 'nothing-here')
    const noDir = await runBinary(['db', 'copy', '--to', freshDatabase(), '--data-dir', missing])
    expect(noDir.code).toBe(2)
    expect(noDir.stderr).toBe(`trawl: data dir ${missing} has no trawl.db: --data-dir or TRAWL_DATA_DIR names the data dir to copy\n`)
  }, 30_000)
})
