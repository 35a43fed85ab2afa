/**
 * The compiled binary on PostgreSQL (TRAWL_DATABASE_URL) with its bodies in S3: what refuses to
 * start, each in one line with exit 2 (no S3, a database that cannot be reached, one a newer
 * trawl migrated), and two `trawl serve` processes sharing one database: a job one creates the
 * other lists, and the bodies of a run one crawls the other reads. Real parts only: a throwaway
 * PostgreSQL cluster (test/helpers/postgres.ts) and s3rver (test/helpers/s3-server.ts).
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { SQL } from 'bun'
import { existsSync, readdirSync } from 'node:fs'
import { join } from 'node:path'
import { POSTGRES_SCHEMA_VERSION } from '../../src/store/postgres/migrate'
import { cleanup, ensureBinary, runBinary, startTrawl, tempDir, type Trawl } from '../helpers/binary'
import { clusterPort, freshDatabase } from '../helpers/postgres'
import { startS3Server, type S3TestServer } from '../helpers/s3-server'
import { waitFor } from '../helpers/wait'

let s3: S3TestServer
beforeAll(async () => {
  await ensureBinary()
  s3 = await startS3Server()
  clusterPort() // the cluster starts here, not inside a test's time
}, 120_000)
afterAll(async () => {
  await cleanup()
  await s3?.stop()
})

const PASSWORD = 'hunter2-not-for-logs'
/** The settings of a process on `url` with bodies under its own S3 prefix. */
const settings = (url: string, prefix = `p-${crypto.randomUUID()}`) => ({ TRAWL_DATABASE_URL: url, ...s3.env(prefix) })
/** A port of 127.0.0.1 nothing listens on. */
function closedPort(): number {
  const l = Bun.listen({ hostname: '127.0.0.1', port: 0, socket: { data() {} } })
  const port = l.port
  l.stop(true)
  return port
}
const lines = (text: string) => text.trimEnd().split('\n')

describe('what PostgreSQL refuses at start: one line, exit 2', () => {
  test('serve without TRAWL_BLOB_URL: bodies must be readable from every process, so S3 is required', async () => {
    const dataDir = join(tempDir(), 'data')
    const r = await runBinary(['serve', '--data-dir', dataDir, '--port', '0', '--scrape-port', '0'], { TRAWL_DATABASE_URL: freshDatabase() })
    expect({ code: r.code, stdout: r.stdout }).toEqual({ code: 2, stdout: '' })
    expect(lines(r.stderr)).toEqual([
      'trawl: TRAWL_DATABASE_URL: with PostgreSQL the artifact bodies must be in S3, so that every process sharing the database can read them; set TRAWL_BLOB_URL=s3://bucket/prefix',
    ])
    expect(existsSync(dataDir)).toBe(false)
  })

  test('a URL that is not postgres:// is a bad setting, its password not shown', async () => {
    const r = await runBinary(['serve', '--database-url', `mysql://trawl:${PASSWORD}@127.0.0.1/db`])
    expect({ code: r.code, stdout: r.stdout }).toEqual({ code: 2, stdout: '' })
    expect(lines(r.stderr)).toEqual(['trawl: --database-url: must be a postgres:// or postgresql:// URL, or empty for SQLite in the data dir, got "mysql://trawl:***@127.0.0.1/db"'])
  })

  test('a database that cannot be reached: serve and every command that opens the store say so without the password', async () => {
    const url = `postgres://trawl:${PASSWORD}@127.0.0.1:${closedPort()}/trawl`
    const shown = url.replace(PASSWORD, '***')
    const runId = crypto.randomUUID()
    const commands = [
      ['serve', '--port', '0', '--scrape-port', '0'],
      ['crawl', 'http://127.0.0.1:1/'],
      ['export', runId],
      ['extract', 'http://127.0.0.1:1/', '--data-map', runId],
      ['payments'],
      ['mcp'],
    ]
    for (const command of commands) {
      const dataDir = join(tempDir(), 'data')
      const r = await runBinary([...command, '--data-dir', dataDir], settings(url))
      expect({ command, code: r.code, stdout: r.stdout }).toEqual({ command, code: 2, stdout: '' })
      expect(lines(r.stderr)).toHaveLength(1)
      expect(r.stderr).toStartWith(`trawl: TRAWL_DATABASE_URL: ${shown} cannot be used: `)
      expect(r.stderr).not.toContain(PASSWORD)
      expect(existsSync(dataDir)).toBe(false)
    }
  }, 60_000)

  test('a database the server refuses (no such database) is one line too, without the password', async () => {
    const url = `postgres://trawl:${PASSWORD}@127.0.0.1:${clusterPort()}/no_such_database`
    const r = await runBinary(['serve', '--port', '0', '--scrape-port', '0', '--data-dir', join(tempDir(), 'data')], settings(url))
    expect({ code: r.code, stdout: r.stdout }).toEqual({ code: 2, stdout: '' })
    expect(lines(r.stderr)).toHaveLength(1)
    expect(r.stderr).toStartWith(`trawl: TRAWL_DATABASE_URL: ${url.replace(PASSWORD, '***')} cannot be used: `)
    expect(r.stderr).not.toContain(PASSWORD)
  })

  test('a database migrated by a newer trawl is refused, and left as it was', async () => {
    const url = freshDatabase()
    const sql = new SQL(url)
    try {
      await sql`INSERT INTO trawl_schema (version, applied_at) VALUES (${POSTGRES_SCHEMA_VERSION + 1}, 0)`
      const r = await runBinary(['serve', '--port', '0', '--scrape-port', '0', '--data-dir', join(tempDir(), 'data')], settings(url))
      expect({ code: r.code, stdout: r.stdout }).toEqual({ code: 2, stdout: '' })
      expect(lines(r.stderr)).toEqual([`trawl: ${url}: database schema version ${POSTGRES_SCHEMA_VERSION + 1} is newer than this binary knows (${POSTGRES_SCHEMA_VERSION}); upgrade trawl`])
      const versions = await sql`SELECT version FROM trawl_schema ORDER BY version`
      expect(versions.map((v: { version: number }) => v.version)).toEqual([...Array.from({ length: POSTGRES_SCHEMA_VERSION }, (_, i) => i + 1), POSTGRES_SCHEMA_VERSION + 1])
    } finally {
      await sql.close()
    }
  })
})

describe('two serve processes on one database', () => {
  let url: string
  let one: Trawl
  let two: Trawl
  beforeAll(async () => {
    url = freshDatabase()
    // The same bucket and prefix: either process may be asked for a body the other put.
    const env = { ...settings(url, 'shared'), TRAWL_ALLOW_PRIVATE_NETWORKS: 'true' }
    ;[one, two] = await Promise.all([startTrawl({ env }), startTrawl({ env })])
  }, 30_000)
  afterAll(async () => {
    for (const t of [one, two]) if (t) expect(await t.stop()).toEqual({ code: 0, signal: null })
  })

  test('each starts, and its data dir holds no database: only the fetch journal is local', () => {
    for (const t of [one, two]) {
      expect(t.stdout()).toContain(' listening: ')
      expect(existsSync(join(t.dataDir, 'trawl.db'))).toBe(false)
      expect(readdirSync(t.dataDir)).toEqual(['journal'])
    }
  })

  test('GET /v1/jobs answers for a tenant; a job one process creates, the other lists and gets', async () => {
    const empty = await one.api.get('/v1/jobs', { tenant: 'acme' })
    expect({ status: empty.status, body: empty.body }).toEqual({ status: 200, body: { data: [], next_page: null } })
    const created = await one.api.post('/v1/jobs', { name: 'shared', config: { seeds: ['http://127.0.0.1:1/'] } }, { tenant: 'acme' })
    expect(created.status).toBe(201)
    const listed = await two.api.get('/v1/jobs', { tenant: 'acme' })
    expect(listed.status).toBe(200)
    expect(listed.body.data.map((j: { id: string; name: string }) => [j.id, j.name])).toEqual([[created.body.id, 'shared']])
    expect((await two.api.get(`/v1/jobs/${created.body.id}`, { tenant: 'acme' })).body).toEqual(created.body)
    // Tenants stay apart across processes too.
    expect((await two.api.get('/v1/jobs', { tenant: 'other' })).body).toEqual({ data: [], next_page: null })
  })

  test('a run one process crawls: the other reads its pages, bodies included', async () => {
    const page = '<!doctype html><html><head><title>Home</title></head><body><h1>Home</h1><p>Read from another process.</p></body></html>'
    const site = Bun.serve({
      hostname: '127.0.0.1',
      port: 0,
      fetch: (req) => (new URL(req.url).pathname === '/' ? new Response(page, { headers: { 'content-type': 'text/html' } }) : new Response('no', { status: 404 })),
    })
    try {
      const created = await one.api.post('/v1/jobs?create_run=true', { name: 'crawled', config: { seeds: [`http://127.0.0.1:${site.port}/`], limits: { max_urls: 1 } } }, { tenant: 'acme' })
      expect(created.status).toBe(201)
      const runId = created.body.run.id as string
      const run = await waitFor(
        'the run to finish',
        async () => {
          const r = await two.api.get(`/v1/runs/${runId}`, { tenant: 'acme' })
          return r.body.status === 'finished' ? r.body : null
        },
        20_000,
        100,
      )
      expect(run.stats.visited).toBe(1)
      const artifacts = await two.api.get(`/v1/artifacts?run_ids=${runId}`, { tenant: 'acme' })
      expect(artifacts.status).toBe(200)
      expect(artifacts.body.data.length).toBeGreaterThan(0)
      for (const t of [two, one]) {
        const bodies = await Promise.all(artifacts.body.data.map(async (a: { id: string }) => (await t.api.get(`/v1/artifacts/${a.id}/blob`, { tenant: 'acme' })).text))
        expect(bodies).toContain(page)
      }
    } finally {
      site.stop(true)
    }
  }, 40_000)
})
