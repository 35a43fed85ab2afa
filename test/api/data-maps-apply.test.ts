// POST /v1/data_maps/{map_id}/apply with a page by `url` (fetched from a 127.0.0.1 server through
// the real fetcher and its address guard) or by `artifact_id` (a row and a blob in the real
// store and blob store), beside base64 `content` (test/api/data-maps.test.ts).
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { normalizeUrl } from '../../src/core/url'
import type { NewArtifact } from '../../src/store/artifacts'
import { job, snapshot, testApi, type TestApi } from '../helpers/api'
import { unusedPort } from '../helpers/fixture-site'

// Relative links, a price in a windows-1252 page (its charset only in the header) and a list.
const SHOP = (extra = '') => `<html><head><title>Shop</title>${extra}</head><body><h1>Kettles</h1>
  <ul><li class="card" data-sku="K-1"><a href="p/k-1">Kettle</a><span class="price">12,50 \x80</span></li>
      <li class="card" data-sku="K-2"><a href="/p/k-2?c=1">Steel kettle</a><span class="price">sold out</span></li></ul></body></html>`
const MAP = {
  item_selector: 'li.card',
  fields: [
    { name: 'sku', selector: ':scope', attr: 'data-sku', required: true },
    { name: 'url', selector: 'a', attr: 'href', type: 'url' },
    { name: 'price', selector: '.price', type: 'number' },
    { name: 'euro', selector: '.price' },
  ],
}
const UNRESOLVED = (href: string) => `"${href}" is relative, and there is no page URL or absolute <base href> to resolve it against`

let api: TestApi
let strict: TestApi // TRAWL_ALLOW_PRIVATE_NETWORKS unset: loopback refused
let site: ReturnType<typeof Bun.serve>
let origin: string
let hits: string[] = []
let mapId: string
let strictMapId: string

const latin1 = (text: string) => Uint8Array.from(text, (c) => c.charCodeAt(0))

beforeAll(async () => {
  site = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    fetch(req) {
      const url = new URL(req.url)
      hits.push(url.pathname)
      if (url.pathname === '/old') return Response.redirect('/shop/list', 301)
      if (url.pathname === '/shop/list') return new Response(latin1(SHOP()), { headers: { 'content-type': 'text/html; charset=windows-1252' } })
      if (url.pathname === '/feed.json') return Response.json({ items: [] })
      return new Response('<h1>Not here</h1>', { status: 404, headers: { 'content-type': 'text/html' } })
    },
  })
  origin = `http://127.0.0.1:${site.port}`
  api = testApi({ TRAWL_ALLOW_PRIVATE_NETWORKS: 'true' })
  strict = testApi()
  const create = async (t: TestApi) => {
    const host = (await t.put('/v1/hosts', { hosts: ['127.0.0.1'] })).body.data[0].hash
    return (await t.post(`/v1/hosts/${host}/data_maps`, { schema_id: crypto.randomUUID(), map: MAP })).body.id as string
  }
  mapId = await create(api)
  strictMapId = await create(strict)
})
afterAll(async () => {
  site.stop(true)
  await Promise.all([api.close(), strict.close()])
})

const apply = (body: unknown, id = mapId, t = api, tenant?: string) => t.post(`/v1/data_maps/${id}/apply`, body, tenant ? { tenant } : {})

/** What MAP gives over SHOP at `page`. */
const shopData = (page: string) => ({
  data: [
    { sku: 'K-1', url: new URL('p/k-1', page).href, price: 12.5, euro: '12,50 €' },
    { sku: 'K-2', url: new URL('/p/k-2?c=1', page).href, price: null, euro: 'sold out' },
  ],
  errors: [{ field: '[1].price', error: 'invalid', message: '"sold out" holds no number' }],
})

describe('apply by url', () => {
  test('fetches the page, follows its redirect, and resolves relative urls against where it ended', async () => {
    hits = []
    const r = await apply({ url: `${origin}/old` })
    expect(r.status).toBe(200)
    expect(r.body).toEqual(shopData(`${origin}/shop/list`))
    expect(r.body.data[0].url).toBe(`${origin}/shop/p/k-1`)
    expect(hits).toEqual(['/old', '/shop/list'])
  })

  test('a private address is refused by the guard unless TRAWL_ALLOW_PRIVATE_NETWORKS is true: 403, nothing fetched', async () => {
    hits = []
    const r = await apply({ url: `${origin}/shop/list` }, strictMapId, strict)
    expect(r.status).toBe(403)
    expect(r.body.error).toBe('blocked_address')
    expect(r.body.message).toContain('127.0.0.1')
    expect(hits).toEqual([])
  })

  test('no answer is the fetch API error; an HTTP error 502 http_status; a page that is not HTML 415', async () => {
    const refused = await apply({ url: `http://127.0.0.1:${await unusedPort()}/` })
    expect(refused.status).toBe(502)
    expect(refused.body.error).toBe('connect')
    const missing = await apply({ url: `${origin}/gone` })
    expect(missing.status).toBe(502)
    expect(missing.body).toEqual({ error: 'http_status', message: `${origin}/gone answered HTTP 404` })
    const json = await apply({ url: `${origin}/feed.json` })
    expect(json.status).toBe(415)
    expect(json.body).toEqual({ error: 'unsupported_content_type', message: `${origin}/feed.json is application/json; a data map applies to HTML and XHTML` })
  })

  test('an unknown map is a 404 before anything is fetched; a url that is not http(s) a 422', async () => {
    hits = []
    const r = await apply({ url: `${origin}/shop/list` }, crypto.randomUUID())
    expect(r.status).toBe(404)
    expect(r.body).toEqual({ error: 'not_found', message: 'data map not found' })
    expect((await apply({ url: `${origin}/shop/list` }, mapId, api, 'other')).status).toBe(404)
    expect(hits).toEqual([])
    for (const url of ['ftp://127.0.0.1/x', '/shop/list', 'http://']) {
      const bad = await apply({ url })
      expect(bad.status).toBe(422)
      expect(bad.body).toEqual({ error: 'validation', fields: [{ field: 'url', errors: ['must be an absolute http or https URL'] }] })
    }
  })
})

describe('apply by artifact_id', () => {
  let runId: string
  let otherRun: string
  const PAGE_URL = () => `${origin}/shop/list`

  /** A stored body and its row, as the engine records them; its URL in the link catalogue. */
  async function record(over: Partial<NewArtifact> & { body?: Uint8Array; url?: string } = {}) {
    const { body = latin1(SHOP()), url = PAGE_URL(), tenant = 'acme', ...rest } = over
    const link = (await api.store.links.upsert(tenant, [normalizeUrl(url)!]))[0]!
    const id = rest.id ?? crypto.randomUUID()
    const row: NewArtifact = {
      tenant,
      id,
      run_id: tenant === 'acme' ? runId : otherRun,
      url_hash: link.hash,
      blob_key: `runs/${tenant === 'acme' ? runId : otherRun}/${id}`,
      kind: 'raw',
      pipeline_id: null,
      content_type: 'text/html; charset=windows-1252',
      size: 0,
      checksum: '',
      created_at: Date.now(),
      ...rest,
    }
    const info = await api.blobs.put(row.blob_key, body, row.content_type)
    await api.insertArtifact({ ...row, size: info.size, checksum: info.checksum })
    return id
  }

  beforeAll(async () => {
    runId = (await api.post('/v1/jobs?create_run=true', job())).body.run.id
    otherRun = (await api.post('/v1/jobs?create_run=true', job(), { tenant: 'other' })).body.run.id
  })

  test('reads the stored body with its content type, at the URL the catalogue has for it; nothing is fetched', async () => {
    hits = []
    const id = await record()
    const r = await apply({ artifact_id: id })
    expect(r.status).toBe(200)
    expect(r.body).toEqual(shopData(PAGE_URL()))
    expect(hits).toEqual([])
  })

  test('an artifact whose link is not in the catalogue has no page URL: relative urls are errors (decision 84)', async () => {
    const id = await record()
    // As a row recorded for a URL the catalogue lacks: a hash of no link, so no link seq either.
    await api.exec('UPDATE artifacts SET url_hash = ?, link_seq = NULL WHERE id = ?', ['f'.repeat(32), id])
    const r = await apply({ artifact_id: id })
    expect(r.status).toBe(200)
    expect(r.body.data.map((d: { url: unknown }) => d.url)).toEqual([null, null])
    expect(r.body.errors.slice(0, 1)).toEqual([{ field: '[0].url', error: 'invalid', message: UNRESOLVED('p/k-1') }])
  })

  test("another tenant's artifact, an unknown one and one whose body is gone are 404s", async () => {
    const theirs = await record({ tenant: 'other' })
    expect((await apply({ artifact_id: theirs }, mapId, api, 'other')).status).toBe(404) // the map is acme's
    const r = await apply({ artifact_id: theirs })
    expect(r.status).toBe(404)
    expect(r.body).toEqual({ error: 'not_found', message: 'artifact not found' })
    expect((await apply({ artifact_id: crypto.randomUUID() })).body).toEqual({ error: 'not_found', message: 'artifact not found' })
    const gone = await record()
    await api.blobs.delete(`runs/${runId}/${gone}`)
    expect((await apply({ artifact_id: gone })).body).toEqual({ error: 'not_found', message: 'artifact content not found' })
  })

  test('a parsed (JSON) artifact is a 415; one larger than TRAWL_MAX_BODY_BYTES a 422 on artifact_id', async () => {
    const parsed = await record({ kind: 'parsed', pipeline_id: 'default', content_type: 'application/json', body: new TextEncoder().encode('{}') })
    const r = await apply({ artifact_id: parsed })
    expect(r.status).toBe(415)
    expect(r.body).toEqual({ error: 'unsupported_content_type', message: `artifact ${parsed} is application/json; a data map applies to HTML and XHTML` })
    // As a crawl with a larger store.max_body_bytes may have stored it (the size the row records).
    const big = await record()
    await api.exec('UPDATE artifacts SET size = ? WHERE id = ?', [api.config.maxBodyBytes + 1, big])
    const tooLarge = await apply({ artifact_id: big })
    expect(tooLarge.status).toBe(422)
    expect(tooLarge.body).toEqual({ error: 'validation', fields: [{ field: 'artifact_id', errors: ['names an artifact of 10485761 bytes; apply reads at most 10485760 (TRAWL_MAX_BODY_BYTES)'] }] })
  })
})

describe('exactly one source', () => {
  test('none, two or three are a 422 on body; nothing is fetched, stored or looked up', async () => {
    const before = await snapshot(api)
    hits = []
    const content = Buffer.from(SHOP()).toString('base64')
    const cases: [unknown, string][] = [
      [{}, 'must have exactly one of content, url and artifact_id'],
      [{ content, url: `${origin}/shop/list` }, 'must have exactly one of content, url and artifact_id, not content and url'],
      [{ url: `${origin}/shop/list`, artifact_id: crypto.randomUUID() }, 'must have exactly one of content, url and artifact_id, not url and artifact_id'],
      [{ content, url: `${origin}/shop/list`, artifact_id: crypto.randomUUID() }, 'must have exactly one of content, url and artifact_id, not content and url and artifact_id'],
    ]
    for (const [body, message] of cases) {
      for (const id of [mapId, crypto.randomUUID()]) {
        const r = await apply(body, id)
        expect(r.status).toBe(422)
        expect(r.body).toEqual({ error: 'validation', fields: [{ field: 'body', errors: [message] }] })
      }
    }
    expect(hits).toEqual([])
    expect(await snapshot(api)).toEqual(before)
  })

  test('base64 content still has no page URL', async () => {
    const r = await apply({ content: Buffer.from(SHOP()).toString('base64') })
    expect(r.status).toBe(200)
    expect(r.body.data[0].url).toBeNull()
    expect(r.body.errors[0]).toEqual({ field: '[0].url', error: 'invalid', message: UNRESOLVED('p/k-1') })
  })
})
