import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { job, snapshot, testApi, type TestApi } from '../helpers/api'

let api: TestApi
let jobId: string
let runId: string
beforeAll(async () => {
  api = testApi({ TRAWL_PROXIES: 'isp=http://proxy.example:3128' })
  const created = (await api.post('/v1/jobs?create_run=true', job())).body
  jobId = created.id
  runId = created.run.id
})
afterAll(() => api.close())

const UUID = '00000000-0000-4000-8000-000000000000'
const HASH = 'a379a6f6eeafb9a55e378c118034e275'
const withConfig = (config: unknown) => ({ name: 'j', config })

type Case = [label: string, method: string, path: () => string, body: unknown, fields: { field: string; errors: string[] }[]]

// Every row: the request, and the exact 422 body's fields. Each must also change nothing.
const CASES: Case[] = [
  // query parameters
  ['per_page too big', 'GET', () => '/v1/jobs?per_page=500', undefined, [{ field: 'per_page', errors: ['must be <= 100'] }]],
  ['per_page zero', 'GET', () => '/v1/runs?per_page=0', undefined, [{ field: 'per_page', errors: ['must be >= 1'] }]],
  ['per_page text', 'GET', () => '/v1/hosts?per_page=ten', undefined, [{ field: 'per_page', errors: ['must be an integer'] }]],
  ['bad cursor', 'GET', () => '/v1/links?page=bm9wZQ', undefined, [{ field: 'page', errors: ['is not a cursor this service issued'] }]],
  ['unknown query parameter', 'GET', () => '/v1/jobs?per_pag=5', undefined, [{ field: 'per_pag', errors: ['is not a known query parameter'] }]],
  ['bad uuid filter', 'GET', () => '/v1/jobs?include_ids=1&include_ids=' + UUID, undefined, [{ field: 'include_ids[0]', errors: ['must be a uuid'] }]],
  ['bad date filter', 'GET', () => '/v1/jobs?created_before=yesterday', undefined, [{ field: 'created_before', errors: ['must be an RFC 3339 date-time'] }]],
  ['date without zone', 'GET', () => '/v1/runs?finished_after=2026-01-01T00:00:00', undefined, [{ field: 'finished_after', errors: ['must be an RFC 3339 date-time'] }]],
  ['bad status filter', 'GET', () => '/v1/runs?statuses=done', undefined, [{ field: 'statuses[0]', errors: ['must be one of "pending", "running", "paused", "finished"'] }]],
  ['bad hash filter', 'GET', () => '/v1/links?url_hashes=zz', undefined, [{ field: 'url_hashes[0]', errors: ['must be 32 lowercase hex characters'] }]],
  ['bad labels filter', 'GET', () => '/v1/hosts?labels=env', undefined, [{ field: 'labels', errors: ['must be given as labels[name]=value'] }]],
  ['create_run not boolean', 'POST', () => '/v1/jobs?create_run=yes', job(), [{ field: 'create_run', errors: ['must be a boolean'] }]],
  // path parameters
  ['job id', 'GET', () => '/v1/jobs/123', undefined, [{ field: 'job_id', errors: ['must be a uuid'] }]],
  ['run id', 'DELETE', () => '/v1/runs/abc', undefined, [{ field: 'run_id', errors: ['must be a uuid'] }]],
  ['host hash', 'GET', () => '/v1/hosts/ABC/labels', undefined, [{ field: 'host_hash', errors: ['must be 32 lowercase hex characters'] }]],
  ['link hash', 'PUT', () => '/v1/links/x/labels', { labels: {} }, [{ field: 'link_hash', errors: ['must be 32 lowercase hex characters'] }]],
  // bodies
  ['malformed JSON', 'POST', () => '/v1/jobs', '{"name":', [{ field: 'body', errors: [expect.stringContaining('is not valid JSON')] as never }]],
  ['body not an object', 'POST', () => '/v1/jobs', [1, 2], [{ field: 'body', errors: ['must be an object'] }]],
  ['missing body', 'POST', () => '/v1/jobs', undefined, [{ field: 'body', errors: ['must be an object'] }]],
  [
    'missing name and config',
    'POST',
    () => '/v1/jobs',
    {},
    [
      { field: 'name', errors: ['is required'] },
      { field: 'config', errors: ['is required'] },
    ],
  ],
  ['name too long', 'POST', () => '/v1/jobs', { name: 'x'.repeat(256), config: {} }, [{ field: 'name', errors: ['must be at most 255 characters'] }]],
  ['unknown body key', 'POST', () => '/v1/jobs', { ...job(), owner: 'me' }, [{ field: 'owner', errors: ['is not a known field'] }]],
  ['bad id', 'POST', () => '/v1/jobs', { ...job(), id: 'nope' }, [{ field: 'id', errors: ['must be a uuid'] }]],
  ['label value type', 'POST', () => '/v1/jobs', { ...job(), labels: { a: 1 } }, [{ field: 'labels.a', errors: ['must be a string'] }]],
  ['config not object', 'POST', () => '/v1/jobs', withConfig('x'), [{ field: 'config', errors: ['must be an object'] }]],
  ['unknown config key', 'POST', () => '/v1/jobs', withConfig({ depth: 2 }), [{ field: 'config.depth', errors: ['is not a known field'] }]],
  ['nested unknown key', 'POST', () => '/v1/jobs', withConfig({ limits: { max_pages: 2 } }), [{ field: 'config.limits.max_pages', errors: ['is not a known field'] }]],
  ['max_depth type', 'POST', () => '/v1/jobs', withConfig({ limits: { max_depth: 'x' } }), [{ field: 'config.limits.max_depth', errors: ['must be an integer'] }]],
  ['max_depth negative', 'POST', () => '/v1/jobs', withConfig({ limits: { max_depth: -1 } }), [{ field: 'config.limits.max_depth', errors: ['must be >= 0'] }]],
  ['seed not a URL', 'POST', () => '/v1/jobs', withConfig({ seeds: ['https://ok.example/', 'example.com'] }), [{ field: 'config.seeds[1]', errors: ['must be an absolute http(s) URL'] }]],
  ['bad duration', 'POST', () => '/v1/jobs', withConfig({ limits: { max_age: '1 hour' } }), [{ field: 'config.limits.max_age', errors: ['must be a duration such as 250ms, 30s or 1h30m'] }]],
  ['timeout out of bounds', 'POST', () => '/v1/jobs', withConfig({ fetch: { timeout: '10m' } }), [{ field: 'config.fetch.timeout', errors: ['must be between 10ms and 300s'] }]],
  ['domains enum', 'POST', () => '/v1/jobs', withConfig({ scope: { domains: 'everything' } }), [{ field: 'config.scope.domains', errors: ['must be one of "same_host", "same_domain", "any"'] }]],
  [
    'category enum',
    'POST',
    () => '/v1/jobs',
    withConfig({ scope: { categories: ['news'] } }),
    [{ field: 'config.scope.categories[0]', errors: ['must be one of "articles", "blogs", "products", "forums", "sections", "others"'] }],
  ],
  [
    'bad include regex',
    'POST',
    () => '/v1/jobs',
    withConfig({ scope: { include: ['ok', '(unclosed'] } }),
    [{ field: 'config.scope.include[1]', errors: [expect.stringContaining('is not a valid RE2 regular expression')] as never }],
  ],
  [
    'lookbehind is not RE2',
    'POST',
    () => '/v1/jobs',
    withConfig({ scope: { exclude: ['(?<=a)b'] } }),
    [{ field: 'config.scope.exclude[0]', errors: [expect.stringContaining('is not a valid RE2 regular expression')] as never }],
  ],
  ['client kind', 'POST', () => '/v1/jobs', withConfig({ fetch: { client: { kind: 'curl' } } }), [{ field: 'config.fetch.client.kind', errors: ['must be one of "standard", "browser"'] }]],
  [
    'browser wait_until',
    'POST',
    () => '/v1/jobs',
    withConfig({ fetch: { client: { kind: 'browser', wait_until: 'idle' } } }),
    [{ field: 'config.fetch.client.wait_until', errors: ['must be one of "load", "networkidle"'] }],
  ],
  [
    'unknown proxy',
    'POST',
    () => '/v1/jobs',
    withConfig({ fetch: { proxies: ['isp', 'dc'] } }),
    [{ field: 'config.fetch.proxies[1]', errors: ['is not a configured proxy (TRAWL_PROXIES names: isp)'] }],
  ],
  ['header pair', 'POST', () => '/v1/jobs', withConfig({ fetch: { headers: [['x-a']] } }), [{ field: 'config.fetch.headers[0]', errors: ['must have exactly 2 items'] }]],
  ['header name', 'POST', () => '/v1/jobs', withConfig({ fetch: { headers: [['bad name', 'v']] } }), [{ field: 'config.fetch.headers[0][0]', errors: ['must be an HTTP header name'] }]],
  [
    'cookie same_site',
    'POST',
    () => '/v1/jobs',
    withConfig({ fetch: { cookies: [{ name: 'a', value: 'b', same_site: 'lax' }] } }),
    [{ field: 'config.fetch.cookies[0].same_site', errors: ['must be one of "Lax", "Strict", "None"'] }],
  ],
  [
    'middleware kind',
    'POST',
    () => '/v1/jobs',
    withConfig({ fetch: { middleware: [{ kind: 'magic' }] } }),
    [{ field: 'config.fetch.middleware[0].kind', errors: [expect.stringContaining('must be one of "set_headers"')] as never }],
  ],
  [
    'middleware field',
    'POST',
    () => '/v1/jobs',
    withConfig({ fetch: { middleware: [{ kind: 'retry_on_status', statuses: [700] }] } }),
    [{ field: 'config.fetch.middleware[0].statuses[0]', errors: ['must be <= 599'] }],
  ],
  [
    'step kind',
    'POST',
    () => '/v1/jobs',
    withConfig({ pipelines: [{ steps: [{ kind: 'screenshot' }] }] }),
    [{ field: 'config.pipelines[0].steps[0].kind', errors: [expect.stringContaining('must be one of "markdown"')] as never }],
  ],
  [
    'field without selector',
    'POST',
    () => '/v1/jobs',
    withConfig({ pipelines: [{ steps: [{ kind: 'fields', fields: [{ name: 'a' }] }] }] }),
    [{ field: 'config.pipelines[0].steps[0].fields[0].selector', errors: ['is required'] }],
  ],
  [
    'nested field type',
    'POST',
    () => '/v1/jobs',
    withConfig({ pipelines: [{ steps: [{ kind: 'fields', fields: [{ name: 'a', selector: 'a', fields: [{ name: 'b', selector: 'b', type: 'money' }] }] }] }] }),
    [{ field: 'config.pipelines[0].steps[0].fields[0].fields[0].type', errors: [expect.stringContaining('must be one of "string"')] as never }],
  ],
  [
    'guard regex',
    'POST',
    () => '/v1/jobs',
    withConfig({ pipelines: [{ guards: [{ kind: 'url', include: ['[a-'] }] }] }),
    [{ field: 'config.pipelines[0].guards[0].include[0]', errors: [expect.stringContaining('RE2')] as never }],
  ],
  ['behavior', 'POST', () => '/v1/jobs', withConfig({ pipelines: [{ behavior: 'halt' }] }), [{ field: 'config.pipelines[0].behavior', errors: ['must be one of "continue", "stop"'] }]],
  ['data_map id', 'POST', () => '/v1/jobs', withConfig({ pipelines: [{ steps: [{ kind: 'data_map', id: 'm1' }] }] }), [{ field: 'config.pipelines[0].steps[0].id', errors: ['must be a uuid'] }]],
  ['store body cap', 'POST', () => '/v1/jobs', withConfig({ store: { max_body_bytes: 10 } }), [{ field: 'config.store.max_body_bytes', errors: ['must be >= 1024'] }]],
  [
    'several at once',
    'POST',
    () => '/v1/jobs?create_run=1',
    { name: '', config: { politeness: { concurrency: 0, delay: 'soon' } } },
    [
      { field: 'create_run', errors: ['must be a boolean'] },
      { field: 'name', errors: ['must not be empty'] },
      { field: 'config.politeness.concurrency', errors: ['must be >= 1'] },
      { field: 'config.politeness.delay', errors: ['must be a duration such as 250ms, 30s or 1h30m'] },
    ],
  ],
  [
    'schema and RE2/bound/proxy errors in one answer',
    'POST',
    () => '/v1/jobs',
    { name: 5, config: { scope: { include: ['(x'], domains: 'x' }, fetch: { timeout: '1h', proxies: ['nope'] } } },
    [
      { field: 'name', errors: ['must be a string'] },
      { field: 'config.scope.domains', errors: ['must be one of "same_host", "same_domain", "any"'] },
      { field: 'config.scope.include[0]', errors: [expect.stringContaining('RE2')] as never },
      { field: 'config.fetch.timeout', errors: ['must be between 10ms and 300s'] },
      { field: 'config.fetch.proxies[0]', errors: ['is not a configured proxy (TRAWL_PROXIES names: isp)'] },
    ],
  ],
  [
    'hosts: schema and domain errors in one answer',
    'PUT',
    () => '/v1/hosts',
    { hosts: ['ok.example', 'not valid', 7] },
    [
      { field: 'hosts[2]', errors: ['must be a string'] },
      { field: 'hosts[1]', errors: ['is not a valid domain'] },
    ],
  ],
  [
    'minimum',
    'POST',
    () => '/v1/jobs',
    withConfig({ fetch: { middleware: [{ kind: 'rate_limit', per_second: 0 }] } }),
    [{ field: 'config.fetch.middleware[0].per_second', errors: ['must be >= 0.001'] }],
  ],
  ['put job config', 'PUT', () => `/v1/jobs/${jobId}`, { config: { sitemaps: 'yes' } }, [{ field: 'config.sitemaps', errors: ['must be a boolean'] }]],
  ['put job labels', 'PUT', () => `/v1/jobs/${jobId}`, { labels: [] }, [{ field: 'labels', errors: ['must be an object'] }]],
  ['run body id', 'POST', () => `/v1/jobs/${jobId}/runs`, { id: 5 }, [{ field: 'id', errors: ['must be a string'] }]],
  ['labels keys missing', 'DELETE', () => `/v1/hosts/${HASH}/labels?keys=`, undefined, [{ field: 'keys[0]', errors: ['must not be empty'] }]],
]

describe('every invalid input is a 422 naming the field, and changes nothing', () => {
  test.each(CASES)('%s', async (_label, method, path, body, fields) => {
    const before = await snapshot(api)
    const jobBefore = (await api.get(`/v1/jobs/${jobId}`)).body
    const r = await api.call(method, path(), typeof body === 'string' ? { raw: body } : { body })
    expect(r.status).toBe(422)
    expect(r.headers.get('content-type')).toContain('application/json')
    expect(r.body).toEqual({ error: 'validation', fields })
    expect(await snapshot(api)).toEqual(before)
    expect((await api.get(`/v1/jobs/${jobId}`)).body).toEqual(jobBefore)
    expect((await api.get(`/v1/runs/${runId}`)).body.status).toBe('pending')
  })
})

describe('order of checks and other error bodies', () => {
  test('tenant (400) comes before validation, even for a body that does not parse', async () => {
    const missing = await api.call('POST', '/v1/jobs?per_page=x', { raw: '{bad', tenant: null })
    expect(missing.status).toBe(400)
    expect(missing.body).toEqual({ error: 'tenant_required', message: 'the X-Tenant-Id header is required' })
    const malformed = await api.call('GET', '/v1/jobs?per_page=500', { tenant: 'has space' })
    expect(malformed.status).toBe(400)
    expect(malformed.body.error).toBe('invalid_tenant')
    expect((await api.call('GET', '/v1/jobs', { tenant: 'x'.repeat(129) })).body.error).toBe('invalid_tenant')
    expect((await api.call('GET', '/v1/jobs', { tenant: 'Acme.Corp_1:eu-west' })).status).toBe(200)
  })

  test('validation (422) comes before existence (404), existence before state (409)', async () => {
    expect((await api.put(`/v1/jobs/${UUID}`, { name: '' })).status).toBe(422)
    expect((await api.put(`/v1/jobs/${UUID}`, { name: 'ok' })).status).toBe(404)
    expect((await api.put(`/v1/runs/${UUID}/pause`)).status).toBe(404)
    expect((await api.put(`/v1/runs/${runId}/pause`)).status).toBe(409)
  })

  test('unknown routes are a 404 in the error shape', async () => {
    const r = await api.get('/v1/nothing-here')
    expect(r.status).toBe(404)
    expect(r.body).toEqual({ error: 'not_found', message: 'no route for GET /v1/nothing-here' })
  })

  test('a body over the limit is a 413', async () => {
    const r = await api.call('PUT', '/v1/hosts', { raw: '{}', headers: { 'content-length': String(api.config.maxRequestBytes + 1) } })
    expect(r.status).toBe(413)
    expect(r.body.error).toBe('payload_too_large')
  })

  test('a streamed body (no Content-Length) over the limit is a 413 too', async () => {
    const small = testApi({}, { maxRequestBytes: 1000 })
    try {
      const stream = new ReadableStream({
        start(c) {
          c.enqueue(new TextEncoder().encode(`{"hosts":["${'a'.repeat(2000)}.example"]}`))
          c.close()
        },
      })
      const req = new Request('http://trawl.test/v1/hosts', { method: 'PUT', body: stream, headers: { 'x-tenant-id': 'acme', 'content-type': 'application/json' } })
      expect(req.headers.get('content-length')).toBeNull() // so only the parser's own count can catch it
      const res = await small.app.handle(req)
      expect(res.status).toBe(413)
      expect(await res.json()).toEqual({ error: 'payload_too_large', message: 'request body is larger than 1000 bytes' })
      expect((await snapshot(small)).hosts).toBe(0)
    } finally {
      await small.close()
    }
  })

  test('a body without a JSON content type is still read as JSON', async () => {
    const r = await api.call('PUT', '/v1/hosts', { raw: '{"hosts":["plain.example"]}', headers: { 'content-type': 'text/plain' } })
    expect(r.status).toBe(200)
    expect(r.body.data[0].domain).toBe('plain.example')
  })
})

describe('unexpected failures', () => {
  test('are a 500 internal with no stack trace, and are logged', async () => {
    const broken = testApi()
    await broken.breakStore() // the store now throws on every statement
    const r = await broken.get('/v1/jobs')
    expect(r.status).toBe(500)
    expect(r.body).toEqual({ error: 'internal', message: 'internal error' })
    expect(JSON.stringify(r.body)).not.toContain('at ')
    expect(broken.logs.some((l) => l.includes('error unhandled error') && l.includes('GET'))).toBe(true)
    await broken.close()
  })
})
