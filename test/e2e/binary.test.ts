// End-to-end: the compiled binary (TRAWL_BINARY or dist/trawl, built here when missing) over
// real HTTP. What this guards above all: build flags (minification, bytecode) must not drop
// validation, routing, the OpenAPI document or the embedded docs assets.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { BINARY, cleanup, ensureBinary, freePorts, REPO, runBinary, startTrawl, tempDir, type Trawl } from '../helpers/binary'
import { onPostgres, sqliteOnlyTest } from '../helpers/binary-engine'
import { waitFor } from '../helpers/wait'

const VERSION = (JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')) as { version: string }).version
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/
const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')

/** Query string from pairs, repeated keys and `labels[key]` brackets kept (percent-encoded). */
const qs = (pairs: [string, string | number][]) => `?${new URLSearchParams(pairs.map(([k, v]): [string, string] => [k, String(v)])).toString()}`

// The runner crawls every run it is given. These tests are about storage and the HTTP surface,
// so their runs crawl a server that accepts connections and never answers: a run stays in flight
// (its robots.txt fetch waits out the 30 s timeout) until the test stops it.
const hang = Bun.listen({ hostname: '127.0.0.1', port: 0, socket: { data() {} } })
const SEED = `http://127.0.0.1:${hang.port}/`
const CRAWLS = { TRAWL_ALLOW_PRIVATE_NETWORKS: 'true' }
const jobBody = (over: Record<string, unknown> = {}) => ({ name: 'docs', config: { seeds: [SEED] }, ...over })

beforeAll(ensureBinary, { timeout: 120_000 })
afterAll(async () => {
  await cleanup()
  hang.stop(true)
})

describe('command line', () => {
  test('the binary under test exists', () => {
    expect(existsSync(BINARY)).toBe(true)
  })

  test('`trawl version` prints the version from package.json', async () => {
    const r = await runBinary(['version'])
    expect(r.code).toBe(0)
    expect(r.stdout).toMatch(new RegExp(`^trawl ${escape(VERSION)} \\(bun \\d+\\.\\d+\\.\\d+[^)]*\\)\\n$`))
    expect(r.stderr).toBe('')
  })

  test('no command exits 2 with the usage', async () => {
    const r = await runBinary([])
    expect(r.code).toBe(2)
    expect(r.stdout).toContain('usage:')
    expect(r.stdout).toContain('trawl serve')
  })

  test('an unknown command exits 2 and names it on stderr', async () => {
    const r = await runBinary(['frobnicate'])
    expect(r.code).toBe(2)
    expect(r.stderr.split('\n')[0]).toBe('trawl: unknown command "frobnicate"')
    expect(r.stdout).toBe('')
  })
})

describe('configuration errors exit 2 with one line naming the setting', () => {
  const cases: { what: string; args: string[]; env: Record<string, string>; names: string; says: RegExp }[] = [
    { what: 'TRAWL_PORT=abc', args: [], env: { TRAWL_PORT: 'abc' }, names: 'TRAWL_PORT', says: /port number.*"abc"/ },
    { what: '--port 99999', args: ['--port', '99999'], env: {}, names: '--port', says: /port number.*"99999"/ },
    { what: 'TRAWL_LOG_LEVEL=loud', args: [], env: { TRAWL_LOG_LEVEL: 'loud' }, names: 'TRAWL_LOG_LEVEL', says: /debug, info, warn, error.*"loud"/ },
    { what: 'TRAWL_PROXIES=garbage', args: [], env: { TRAWL_PROXIES: 'garbage' }, names: 'TRAWL_PROXIES', says: /"garbage"/ },
    { what: 'TRAWL_SCRAPE_PORT=-1', args: [], env: { TRAWL_SCRAPE_PORT: '-1' }, names: 'TRAWL_SCRAPE_PORT', says: /"-1"/ },
    { what: 'an unknown flag', args: ['--frobnicate'], env: {}, names: '--frobnicate', says: /unknown flag/i },
    { what: 'a flag without its value', args: ['--port'], env: {}, names: '--port', says: /missing/ },
  ]
  for (const c of cases) {
    // Refused before the store is opened, whichever it is: SQLite's pass covers them.
    sqliteOnlyTest(c.what, async () => {
      const dataDir = join(tempDir(), 'data')
      const r = await runBinary(['serve', '--data-dir', dataDir, ...c.args], c.env)
      expect({ code: r.code, stdout: r.stdout }).toEqual({ code: 2, stdout: '' })
      const lines = r.stderr.trimEnd().split('\n')
      expect(lines).toHaveLength(1)
      expect(lines[0]!.startsWith('trawl: ')).toBe(true)
      expect(lines[0]).toContain(c.names)
      expect(lines[0]).toMatch(c.says)
      expect(existsSync(dataDir)).toBe(false) // refused before touching the data dir
    })
  }

  test('with a pay-to address the start-up line says the scrape API is paid, and how', async () => {
    const payTo = '0x' + '12'.repeat(20)
    const t = await startTrawl({ env: { TRAWL_PAY_TO: payTo, TRAWL_PRICE: '$0.002', TRAWL_PAY_NETWORK: 'base' } })
    try {
      expect(t.stdout().split('\n')[0]).toEndWith(`(paid, 0.002 USD per request to ${payTo} on base)`)
      // The binary carries the native checker (scripts/native.ts) and loads it.
      expect(t.stdout() + t.stderr()).toContain('payment_signatures="signatures checked by libsecp256k1"')
    } finally {
      expect(await t.stop()).toEqual({ code: 0, signal: null })
    }
  })

  test('flags beat the environment: TRAWL_PORT=abc with --port N starts on N', async () => {
    const [port] = freePorts(1) as [number]
    const t = await startTrawl({ port, env: { TRAWL_PORT: 'abc' } })
    try {
      expect(t.stdout()).toContain(`management http://127.0.0.1:${port},`)
      const r = await t.api.get('/v1/jobs')
      expect(r.status).toBe(200)
      expect(r.body).toEqual({ data: [], next_page: null })
    } finally {
      expect(await t.stop()).toEqual({ code: 0, signal: null })
    }
  })
})

describe('one server', () => {
  let t: Trawl
  beforeAll(async () => {
    t = await startTrawl({ env: CRAWLS })
  })
  afterAll(async () => {
    await t?.stop()
  })

  test('the start-up line names both bound addresses and says the scrape API is free', () => {
    const first = t.stdout().split('\n')[0]
    expect(first).toBe(`trawl ${VERSION} listening: management http://127.0.0.1:${t.port}, scrape http://127.0.0.1:${t.scrapePort} (free: TRAWL_PAY_TO is not set)`)
  })

  test('a second trawl on a taken port fails in one line and does not share the port', async () => {
    const second = await runBinary(['serve', '--data-dir', tempDir(), '--port', String(t.port), '--scrape-port', String(freePorts(1)[0])])
    expect(second.code).toBe(1)
    const lines = second.stderr.trim().split('\n')
    expect(lines).toHaveLength(1)
    expect(lines[0]).toStartWith('trawl: cannot listen on 127.0.0.1')
    expect((await t.api.get('/v1/jobs')).status).toBe(200)
  })

  test('a body over the limit is our JSON 413, not an empty one (both surfaces)', async () => {
    const scrape = await fetch(`http://127.0.0.1:${t.scrapePort}/v1/scrape`, { method: 'POST', body: 'x'.repeat(2 * 1024 * 1024) })
    expect(scrape.status).toBe(413)
    expect(await scrape.json()).toEqual({ error: 'payload_too_large', message: 'request body is larger than 1048576 bytes' })
    const big = new Uint8Array(64 * 1024 * 1024 + 10).fill(0x20)
    const r = await fetch(`${t.managementUrl}/v1/hosts`, { method: 'PUT', body: big, headers: { 'x-tenant-id': 'acme', 'content-type': 'application/json' } })
    expect(r.status).toBe(413)
    expect(((await r.json()) as { error: string }).error).toBe('payload_too_large')
  })

  describe('validation survives the build flags', () => {
    const tenant = 'validation' // nothing is ever created for this tenant

    test('per_page above the maximum is exactly the documented 422', async () => {
      const r = await t.api.get('/v1/jobs?per_page=500', { tenant })
      expect(r.status).toBe(422)
      expect(r.headers.get('content-type')).toContain('application/json')
      expect(r.text).toBe('{"error":"validation","fields":[{"field":"per_page","errors":["must be <= 100"]}]}')
    })

    test('per_page=0 is a 422 on per_page', async () => {
      const r = await t.api.get('/v1/jobs?per_page=0', { tenant })
      expect(r.status).toBe(422)
      expect(r.body).toEqual({ error: 'validation', fields: [{ field: 'per_page', errors: ['must be >= 1'] }] })
    })

    test('per_page that is not a number is a 422 on per_page', async () => {
      const r = await t.api.get('/v1/runs?per_page=ten', { tenant })
      expect(r.status).toBe(422)
      expect(r.body.fields.map((f: { field: string }) => f.field)).toEqual(['per_page'])
    })

    test('a garbage page cursor is a 422 on page', async () => {
      const r = await t.api.get('/v1/jobs?page=garbage', { tenant })
      expect(r.status).toBe(422)
      expect(r.body.error).toBe('validation')
      expect(r.body.fields).toHaveLength(1)
      expect(r.body.fields[0].field).toBe('page')
      expect(r.body.fields[0].errors.length).toBeGreaterThan(0)
    })

    test('an unknown query parameter is a 422 naming it', async () => {
      const r = await t.api.get('/v1/jobs?colour=red', { tenant })
      expect(r.status).toBe(422)
      expect(r.body).toEqual({ error: 'validation', fields: [{ field: 'colour', errors: ['is not a known query parameter'] }] })
    })

    test('a bad value in a repeated query array is a 422 on the parameter', async () => {
      const r = await t.api.get(
        `/v1/runs${qs([
          ['statuses', 'running'],
          ['statuses', 'sleeping'],
        ])}`,
        { tenant },
      )
      expect(r.status).toBe(422)
      expect(r.body.error).toBe('validation')
      expect(r.body.fields[0].field).toMatch(/^statuses/)
    })

    test('an unknown body key is a 422 naming it (not silently stripped)', async () => {
      const r = await t.api.post('/v1/jobs', jobBody({ colour: 'red' }), { tenant })
      expect(r.status).toBe(422)
      expect(r.body).toEqual({ error: 'validation', fields: [{ field: 'colour', errors: ['is not a known field'] }] })
    })

    test('an unknown nested key is a 422 with its dotted path', async () => {
      const r = await t.api.post('/v1/jobs', jobBody({ config: { seeds: [], limits: { max_dpeth: 2 } } }), { tenant })
      expect(r.status).toBe(422)
      expect(r.body).toEqual({ error: 'validation', fields: [{ field: 'config.limits.max_dpeth', errors: ['is not a known field'] }] })
    })

    test('a string for config.limits.max_depth is a 422 on config.limits.max_depth', async () => {
      const r = await t.api.post('/v1/jobs', jobBody({ config: { limits: { max_depth: 'x' } } }), { tenant })
      expect(r.status).toBe(422)
      expect(r.body).toEqual({ error: 'validation', fields: [{ field: 'config.limits.max_depth', errors: ['must be an integer'] }] })
    })

    test('a missing required field and a wrong type are reported together', async () => {
      const r = await t.api.post('/v1/jobs', { config: { seeds: 'https://example.com/' } }, { tenant })
      expect(r.status).toBe(422)
      const fields = r.body.fields.map((f: { field: string }) => f.field).sort()
      expect(fields).toEqual(['config.seeds', 'name'])
    })

    test('malformed JSON is a 422 on body, whatever the content type', async () => {
      for (const contentType of ['application/json', 'text/plain', undefined]) {
        const r = await t.api.call('POST', '/v1/jobs', { raw: '{"name": "docs", ', tenant, headers: contentType ? { 'content-type': contentType } : {} })
        expect({ contentType, status: r.status }).toEqual({ contentType, status: 422 })
        expect(r.body.error).toBe('validation')
        expect(r.body.fields).toHaveLength(1)
        expect(r.body.fields[0].field).toBe('body')
      }
    })

    test('a missing X-Tenant-Id is 400 tenant_required, checked before the body', async () => {
      for (const r of [await t.api.get('/v1/jobs?per_page=500', { tenant: null }), await t.api.call('POST', '/v1/jobs', { raw: '{oops', tenant: null })]) {
        expect(r.status).toBe(400)
        expect(r.body.error).toBe('tenant_required')
        expect(typeof r.body.message).toBe('string')
      }
    })

    test('a malformed X-Tenant-Id is 400 invalid_tenant', async () => {
      for (const bad of ['a b', 'x'.repeat(129), 'tenant/1']) {
        const r = await t.api.get('/v1/jobs', { tenant: bad })
        expect({ bad, status: r.status, error: r.body.error }).toEqual({ bad, status: 400, error: 'invalid_tenant' })
      }
    })

    test('a non-uuid run id is a 422 on run_id, before any existence check', async () => {
      for (const [method, path] of [
        ['GET', '/v1/runs/not-a-uuid'],
        ['PUT', '/v1/runs/not-a-uuid/stop'],
        ['DELETE', '/v1/runs/not-a-uuid'],
      ] as const) {
        const r = await t.api.call(method, path, { tenant })
        expect({ method, status: r.status }).toEqual({ method, status: 422 })
        expect(r.body).toEqual({ error: 'validation', fields: [{ field: 'run_id', errors: ['must be a uuid'] }] })
      }
    })

    test('a bad host hash is a 422 on host_hash', async () => {
      const r = await t.api.get('/v1/hosts/ABC/labels', { tenant })
      expect(r.status).toBe(422)
      expect(r.body.fields.map((f: { field: string }) => f.field)).toEqual(['host_hash'])
    })

    test('an unknown route is a JSON 404 not_found', async () => {
      for (const path of ['/nope', '/v1/nope']) {
        const r = await t.api.get(path, { tenant })
        expect(r.status).toBe(404)
        expect(r.headers.get('content-type')).toContain('application/json')
        expect(r.body).toEqual({ error: 'not_found', message: expect.any(String) })
      }
    })

    test('none of the rejected requests created anything', async () => {
      for (const list of ['/v1/jobs', '/v1/runs', '/v1/hosts', '/v1/links']) {
        const r = await t.api.get(list, { tenant })
        expect({ list, status: r.status, body: r.body }).toEqual({ list, status: 200, body: { data: [], next_page: null } })
      }
    })
  })

  describe('a full walk over HTTP', () => {
    const A = 'acme'
    const B = 'globex'
    const HOST_HASH = 'a379a6f6eeafb9a55e378c118034e275' // example.com (a test vector of docs/api.md)
    const LINK_HASH = 'ecdd3d64e0505ec8b45134cf86647189' // http://example.com/a/c?x=1
    let job: any
    let run: any
    let other: any

    test('POST /v1/jobs?create_run=true answers 201 with the job and a pending run with a resolved config', async () => {
      const body = jobBody({ labels: { env: 'prod', team: 'search' } })
      const r = await t.api.post('/v1/jobs?create_run=true', body, { tenant: A })
      expect(r.status).toBe(201)
      job = r.body
      expect(job).toMatchObject({ name: 'docs', config: body.config, labels: { env: 'prod', team: 'search' } })
      expect(job.id).toMatch(UUID)
      expect(job.created_at).toMatch(ISO)
      expect(job.updated_at).toMatch(ISO)
      run = job.run
      expect(run).toMatchObject({ job_id: job.id, status: 'pending', stop_reason: null, labels: { env: 'prod', team: 'search' }, started_at: null, finished_at: null })
      expect(run.id).toMatch(UUID)
      expect(run.stats).toEqual({ queued: 0, visited: 0, failed: 0, bytes: 0 })
      expect(run.config.seeds).toEqual([SEED])
      expect(run.config.limits.max_depth).toBe(3)
      expect(run.config.fetch.max_redirects).toBe(5)

      const got = await t.api.get(`/v1/jobs/${job.id}`, { tenant: A })
      expect(got.status).toBe(200)
      const { run: _, ...jobOnly } = job
      expect(got.body).toEqual(jobOnly)
    })

    test('a second job without a run', async () => {
      const r = await t.api.post('/v1/jobs', jobBody({ name: 'blog', labels: { env: 'dev' } }), { tenant: A })
      expect(r.status).toBe(201)
      expect(r.body.run).toBeUndefined()
      other = r.body
    })

    test('GET /v1/jobs filters by labels[key]=value', async () => {
      const names = async (pairs: [string, string][]) => {
        const r = await t.api.get(`/v1/jobs${qs(pairs)}`, { tenant: A })
        expect(r.status).toBe(200)
        expect(r.body.next_page).toBeNull()
        return r.body.data.map((j: { id: string }) => j.id)
      }
      expect(await names([['labels[env]', 'prod']])).toEqual([job.id])
      expect(await names([['labels[env]', 'dev']])).toEqual([other.id])
      expect(
        await names([
          ['labels[env]', 'prod'],
          ['labels[team]', 'search'],
        ]),
      ).toEqual([job.id])
      expect(
        await names([
          ['labels[env]', 'prod'],
          ['labels[team]', 'ads'],
        ]),
      ).toEqual([])
      expect(await names([])).toEqual([other.id, job.id]) // newest first
      // unencoded brackets, as curl -g sends them
      const raw = await t.api.get('/v1/jobs?labels[env]=dev', { tenant: A })
      expect(raw.body.data.map((j: { id: string }) => j.id)).toEqual([other.id])
    })

    test('the runs of the job, and /v1/runs by job_ids and statuses', async () => {
      // The runner takes the run within a moment (its seed hangs, so it stays running); on a
      // loaded machine that moment can outlast the tests above.
      const ofJob = await waitFor('the run taken by the runner', async () => {
        const r = await t.api.get(`/v1/jobs/${job.id}/runs`, { tenant: A })
        return r.body.data?.[0]?.status === 'running' ? r : null
      })
      expect(ofJob.status).toBe(200)
      expect(ofJob.body.data.map((r: any) => r.id)).toEqual([run.id])
      const { status: _s, started_at: _st, stats: _c, ...same } = run
      expect(ofJob.body.data[0]).toMatchObject({ ...same, status: 'running' })
      expect(ofJob.body.data[0].started_at).toMatch(ISO)
      expect(ofJob.body.next_page).toBeNull()
      const byFilter = await t.api.get(
        `/v1/runs${qs([
          ['job_ids', job.id],
          ['statuses', 'pending'],
          ['statuses', 'running'],
        ])}`,
        { tenant: A },
      )
      expect(byFilter.body.data.map((r: any) => r.id)).toEqual([run.id])
      const finished = await t.api.get(
        `/v1/runs${qs([
          ['job_ids', job.id],
          ['statuses', 'finished'],
        ])}`,
        { tenant: A },
      )
      expect(finished.body).toEqual({ data: [], next_page: null })
      const none = await t.api.get(`/v1/jobs/${other.id}/runs`, { tenant: A })
      expect(none.body).toEqual({ data: [], next_page: null })
    })

    test('stop the run: 200 finished/manual; stopping again is 409 conflict', async () => {
      const r = await t.api.put(`/v1/runs/${run.id}/stop`, undefined, { tenant: A })
      expect(r.status).toBe(200)
      expect(r.body).toMatchObject({ id: run.id, job_id: job.id, status: 'finished', stop_reason: 'manual' })
      expect(r.body.finished_at).toMatch(ISO)
      const again = await t.api.put(`/v1/runs/${run.id}/stop`, undefined, { tenant: A })
      expect(again.status).toBe(409)
      expect(again.body).toEqual({ error: 'conflict', message: expect.any(String) })
      const got = await t.api.get(`/v1/runs/${run.id}`, { tenant: A })
      expect(got.body).toEqual(r.body)
      const finished = await t.api.get(
        `/v1/runs${qs([
          ['statuses', 'finished'],
          ['stop_reasons', 'manual'],
        ])}`,
        { tenant: A },
      )
      expect(finished.body.data.map((x: { id: string }) => x.id)).toEqual([run.id])
      run = r.body
    })

    test('PUT /v1/links: two spellings of one URL answer the same hash', async () => {
      const expected = { hash: LINK_HASH, url: 'http://example.com/a/c?x=1', host: { hash: HOST_HASH, domain: 'example.com' }, labels: {} }
      const first = await t.api.put('/v1/links', { urls: ['HTTP://Example.COM:80/a/./b/../c?x=1#frag'] }, { tenant: A })
      expect(first.status).toBe(200)
      expect(first.body.data).toHaveLength(1)
      expect(first.body.data[0]).toMatchObject(expected)
      const second = await t.api.put('/v1/links', { urls: ['http://example.com/a/c?x=1'] }, { tenant: A })
      expect(second.body.data).toEqual(first.body.data)
      const both = await t.api.put('/v1/links', { urls: ['HTTP://Example.COM:80/a/./b/../c?x=1#frag', 'http://example.com/a/c?x=1'] }, { tenant: A })
      expect(both.status).toBe(200)
      expect(both.body.data).toEqual(first.body.data)
      const got = await t.api.get(`/v1/links/${LINK_HASH}`, { tenant: A })
      expect(got.body).toEqual(first.body.data[0])
      const listed = await t.api.get(`/v1/links${qs([['urls', 'http://EXAMPLE.com/a/c?x=1#x']])}`, { tenant: A })
      expect(listed.body).toEqual({ data: first.body.data, next_page: null })
    })

    test('host labels: PUT merges, GET reads them back', async () => {
      const put1 = await t.api.put(`/v1/hosts/${HOST_HASH}/labels`, { labels: { tier: 'gold' } }, { tenant: A })
      expect(put1.status).toBe(200)
      expect(put1.body).toEqual({ labels: { tier: 'gold' } })
      const put2 = await t.api.put(`/v1/hosts/${HOST_HASH}/labels`, { labels: { region: 'eu', tier: 'silver' } }, { tenant: A })
      expect(put2.body).toEqual({ labels: { tier: 'silver', region: 'eu' } })
      const got = await t.api.get(`/v1/hosts/${HOST_HASH}/labels`, { tenant: A })
      expect(got.status).toBe(200)
      expect(got.body).toEqual({ labels: { tier: 'silver', region: 'eu' } })
      const host = await t.api.get(`/v1/hosts/${HOST_HASH}`, { tenant: A })
      expect(host.body).toMatchObject({ hash: HOST_HASH, domain: 'example.com', labels: { tier: 'silver', region: 'eu' } })
    })

    test("tenant B sees none of tenant A's data", async () => {
      const notFound = async (method: string, path: string, body?: unknown) => {
        const r = await t.api.call(method, path, { tenant: B, body })
        expect({ method, path, status: r.status, error: r.body.error }).toEqual({ method, path, status: 404, error: 'not_found' })
      }
      await notFound('GET', `/v1/jobs/${job.id}`)
      await notFound('GET', `/v1/jobs/${job.id}/runs`)
      await notFound('GET', `/v1/runs/${run.id}`)
      await notFound('PUT', `/v1/runs/${run.id}/stop`)
      await notFound('GET', `/v1/hosts/${HOST_HASH}`)
      await notFound('GET', `/v1/hosts/${HOST_HASH}/labels`)
      await notFound('PUT', `/v1/hosts/${HOST_HASH}/labels`, { labels: { owner: 'b' } })
      await notFound('GET', `/v1/links/${LINK_HASH}`)
      await notFound('DELETE', `/v1/jobs/${job.id}`)
      for (const list of ['/v1/jobs', '/v1/runs', '/v1/hosts', '/v1/links']) {
        const r = await t.api.get(list, { tenant: B })
        expect({ list, body: r.body }).toEqual({ list, body: { data: [], next_page: null } })
      }
      // …and A's data is untouched by B's attempts
      expect((await t.api.get(`/v1/jobs/${job.id}`, { tenant: A })).status).toBe(200)
      expect((await t.api.get(`/v1/hosts/${HOST_HASH}/labels`, { tenant: A })).body).toEqual({ labels: { tier: 'silver', region: 'eu' } })
    })
  })

  describe('OpenAPI document and docs page', () => {
    test('GET /openapi.json is OpenAPI 3.1 with the paths and the hand-parsed query parameters', async () => {
      const r = await t.api.get('/openapi.json', { tenant: null })
      expect(r.status).toBe(200)
      const doc = r.body
      expect(typeof doc.openapi).toBe('string')
      expect(doc.openapi.startsWith('3.1')).toBe(true)
      expect(doc.info).toMatchObject({ title: 'trawl management API', version: VERSION })
      const paths = Object.keys(doc.paths)
      for (const p of ['/v1/jobs', '/v1/jobs/{job_id}', '/v1/jobs/{job_id}/runs', '/v1/runs', '/v1/runs/{run_id}/stop', '/v1/hosts/{host_hash}/labels', '/v1/links', '/v1/links/{link_hash}']) {
        expect(paths).toContain(p)
      }
      expect(paths.some((p) => p.startsWith('/docs'))).toBe(false)
      expect(Object.keys(doc.paths['/v1/jobs/{job_id}']).sort()).toEqual(['delete', 'get', 'put'])
      const params: { name: string; in: string; required?: boolean; schema: any }[] = doc.paths['/v1/runs'].get.parameters
      const query = Object.fromEntries(params.filter((p) => p.in === 'query').map((p) => [p.name, p]))
      for (const name of ['statuses', 'job_ids', 'labels', 'per_page', 'page', 'stop_reasons', 'created_after']) expect(Object.keys(query)).toContain(name)
      expect(query.per_page!.schema).toMatchObject({ type: 'integer', minimum: 1, maximum: 100 })
      expect(query.statuses!.schema).toMatchObject({ type: 'array' })
      expect(query.statuses!.schema.items.enum).toEqual(expect.arrayContaining(['pending', 'running', 'paused', 'finished']))
      // how they travel (design.md §3): objects as deepObject, arrays as repeated keys
      expect(query.labels).toMatchObject({ style: 'deepObject', explode: true, schema: { type: 'object' } })
      expect(query.job_ids).toMatchObject({ style: 'form', explode: true, schema: { type: 'array' } })
      const tenantHeader = params.find((p) => p.in === 'header' && p.name.toLowerCase() === 'x-tenant-id')
      expect(tenantHeader?.required).toBe(true)
      const jobParams: { name: string; in: string }[] = doc.paths['/v1/jobs/{job_id}'].get.parameters
      expect(jobParams).toContainEqual(expect.objectContaining({ name: 'job_id', in: 'path' }))
    })

    test('GET /docs is HTML that loads the embedded Swagger UI, never a CDN', async () => {
      const r = await t.api.get('/docs', { tenant: null })
      expect(r.status).toBe(200)
      expect(r.headers.get('content-type')).toContain('text/html')
      expect(r.text).toContain('/docs/assets/swagger-ui-bundle.js')
      for (const cdn of ['unpkg', 'jsdelivr', 'cdn.', 'cdnjs']) expect(r.text).not.toContain(cdn)
      const refs = [...r.text.matchAll(/\b(?:src|href)\s*=\s*"([^"]+)"/g)].map((m) => m[1]!)
      expect(refs.length).toBeGreaterThan(0)
      for (const ref of refs) expect(ref).toMatch(/^\/(?!\/)/) // same-origin paths only
    })

    test('the embedded assets are served', async () => {
      const js = await fetch(`${t.managementUrl}/docs/assets/swagger-ui-bundle.js`)
      expect(js.status).toBe(200)
      expect(js.headers.get('content-type')).toMatch(/javascript/)
      const text = await js.text()
      expect(text.length).toBeGreaterThan(100_000)
      expect(text).toContain('SwaggerUIBundle')
      const css = await fetch(`${t.managementUrl}/docs/assets/swagger-ui.css`)
      expect(css.status).toBe(200)
      expect(css.headers.get('content-type')).toMatch(/text\/css/)
      expect((await css.text()).length).toBeGreaterThan(10_000)
      const missing = await t.api.get('/docs/assets/nope.js', { tenant: null })
      expect(missing.status).toBe(404)
      expect(missing.body.error).toBe('not_found')
    })

    test('the scrape port serves its own OpenAPI document', async () => {
      const r = await t.scrape.get('/openapi.json', { tenant: null })
      expect(r.status).toBe(200)
      expect(r.body.openapi.startsWith('3.1')).toBe(true)
      expect(r.body.info).toMatchObject({ title: 'trawl scrape API', version: VERSION })
      expect(Object.keys(r.body.paths).sort()).toEqual(['/v1/scrape', '/v1/scrape/{url}'])
      const notHere = await t.scrape.get('/v1/jobs', { tenant: 'acme' })
      expect(notHere.status).toBe(404)
      expect(notHere.body.error).toBe('not_found')
    })
  })
})

describe('restart keeps the data', () => {
  test('SIGTERM exits 0, and a new process on the same data dir answers identical bodies', async () => {
    const dataDir = tempDir()
    const first = await startTrawl({ dataDir, env: CRAWLS })
    const created = await first.api.post('/v1/jobs?create_run=true', jobBody({ labels: { keep: 'yes' } }), { tenant: 'acme' })
    expect(created.status).toBe(201)
    const jobId: string = created.body.id
    const runId: string = created.body.run.id
    const link = await first.api.put('/v1/links', { urls: ['https://example.com/kept'] }, { tenant: 'acme' })
    expect(link.status).toBe(200)
    const linkHash: string = link.body.data[0].hash
    expect((await first.api.put(`/v1/hosts/${link.body.data[0].host.hash}/labels`, { labels: { seen: 'once' } }, { tenant: 'acme' })).status).toBe(200)
    expect((await first.api.put(`/v1/runs/${runId}/stop`, undefined, { tenant: 'acme' })).status).toBe(200)
    // The execution notices the stop and writes its last counters; then nothing changes. (A run
    // the runner had not yet started was finished by the stop alone.)
    const logs = () => first.stdout() + first.stderr()
    await waitFor('the execution to leave the run', () => !logs().includes('run started') || logs().includes('run left'), 10_000)

    const reads = [`/v1/jobs/${jobId}`, `/v1/runs/${runId}`, `/v1/jobs/${jobId}/runs`, '/v1/jobs', '/v1/links', '/v1/hosts', `/v1/links/${linkHash}`]
    const before = []
    for (const path of reads) before.push(await first.api.get(path, { tenant: 'acme' }))
    expect(before.map((r) => r.status)).toEqual([200, 200, 200, 200, 200, 200, 200])
    expect(before[0]!.body.labels).toEqual({ keep: 'yes' })
    expect(before[1]!.body.status).toBe('finished')
    expect(before[6]!.body).toMatchObject({ url: 'https://example.com/kept', labels: {} })
    // Among the hosts, the seed's too: the execution adds it when it starts, before or after this test's PUT.
    expect(before[5]!.body.data.find((h: { hash: string }) => h.hash === link.body.data[0].host.hash).labels).toEqual({ seen: 'once' })

    expect(await first.stop()).toEqual({ code: 0, signal: null })

    const second = await startTrawl({ dataDir, env: CRAWLS })
    try {
      expect(second.port).not.toBe(first.port)
      for (const [i, path] of reads.entries()) {
        const r = await second.api.get(path, { tenant: 'acme' })
        expect({ path, status: r.status, text: r.text }).toEqual({ path, status: 200, text: before[i]!.text })
      }
    } finally {
      expect(await second.stop()).toEqual({ code: 0, signal: null })
    }
  })

  test('kill -9 right after a 201 loses nothing that was acknowledged', async () => {
    const dataDir = tempDir()
    const first = await startTrawl({ dataDir, env: CRAWLS })
    const created = await first.api.post('/v1/jobs?create_run=true', jobBody({ name: 'acknowledged' }), { tenant: 'acme' })
    expect(created.status).toBe(201)
    const killed = await first.kill9()
    expect(killed.signal).toBe('SIGKILL')

    const second = await startTrawl({ dataDir, env: CRAWLS })
    try {
      const { run, ...job } = created.body
      const gotJob = await second.api.get(`/v1/jobs/${job.id}`, { tenant: 'acme' })
      expect(gotJob.status).toBe(200)
      expect(gotJob.body).toEqual(job)
      const gotRun = await second.api.get(`/v1/runs/${run.id}`, { tenant: 'acme' })
      expect(gotRun.status).toBe(200)
      // What was acknowledged is all there; the run itself has moved on (the new process resumed it).
      const { status: _s, started_at: _st, stats: _c, ...acknowledged } = run
      expect(gotRun.body).toMatchObject(acknowledged)
      expect(['pending', 'running']).toContain(gotRun.body.status)
      // and the reopened store takes writes again
      const more = await second.api.post('/v1/jobs', jobBody({ name: 'after restart' }), { tenant: 'acme' })
      expect(more.status).toBe(201)
      const names = (await second.api.get('/v1/jobs', { tenant: 'acme' })).body.data.map((j: { name: string }) => j.name)
      expect(names).toEqual(['after restart', 'acknowledged'])
    } finally {
      expect(await second.stop()).toEqual({ code: 0, signal: null })
    }
  })
})
