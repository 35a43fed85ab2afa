import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { join } from 'node:path'
import { qs, snapshot, testApi, type TestApi } from '../helpers/api'

let api: TestApi
let shop: string // host hashes of tenant acme
let blog: string
const SCHEMA = '8a1f7c2e-4b3d-4e5f-9a6b-7c8d9e0f1a2b'
const OTHER_SCHEMA = '1b2c3d4e-5f60-4718-9a0b-c1d2e3f40516'
const MAP = {
  fields: [
    { name: 'title', selector: 'h1', required: true },
    { name: 'link', selector: 'a', attr: 'href', type: 'url' },
  ],
}
const b64 = (html: string | Uint8Array) => Buffer.from(html).toString('base64')

beforeAll(async () => {
  api = testApi()
  const hosts = (await api.put('/v1/hosts', { hosts: ['shop.example', 'Blog.Example'] })).body.data
  shop = hosts[0].hash
  blog = hosts[1].hash
})
afterAll(() => api.close())

const create = (host: string, body: Record<string, unknown> = {}, opts = {}) => api.post(`/v1/hosts/${host}/data_maps`, { schema_id: SCHEMA, map: MAP, ...body }, opts)

describe('POST /v1/hosts/{host_hash}/data_maps', () => {
  test('creates a map as written, with a generated id and its host', async () => {
    const r = await create(shop)
    expect(r.status).toBe(201)
    expect(r.body).toEqual({
      id: expect.stringMatching(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/),
      schema_id: SCHEMA,
      map: MAP,
      host: { hash: shop, domain: 'shop.example' },
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      updated_at: r.body.created_at,
    })
    expect((await api.get(`/v1/data_maps/${r.body.id}`)).body).toEqual(r.body)
  })

  test('takes a given id; the same id again is a 409 and changes nothing; another tenant may use it', async () => {
    const id = crypto.randomUUID()
    expect((await create(shop, { id })).status).toBe(201)
    const before = await snapshot(api)
    const again = await create(blog, { id, schema_id: OTHER_SCHEMA })
    expect(again.status).toBe(409)
    expect(again.body).toEqual({ error: 'conflict', message: `data map ${id} already exists` })
    expect(await snapshot(api)).toEqual(before)
    expect((await api.get(`/v1/data_maps/${id}`)).body).toMatchObject({ schema_id: SCHEMA, host: { hash: shop } })
    const otherHost = (await api.put('/v1/hosts', { hosts: ['shop.example'] }, { tenant: 'other' })).body.data[0].hash
    expect((await create(otherHost, { id }, { tenant: 'other' })).status).toBe(201)
  })

  test('an unknown host is a 404; an invalid body is a 422 first', async () => {
    const before = await snapshot(api)
    const missing = await create('0'.repeat(32))
    expect(missing.status).toBe(404)
    expect(missing.body).toEqual({ error: 'not_found', message: 'host not found' })
    expect((await create('0'.repeat(32), { schema_id: 'x' })).status).toBe(422)
    expect((await create('not-a-hash')).body).toEqual({ error: 'validation', fields: [{ field: 'host_hash', errors: ['must be 32 lowercase hex characters'] }] })
    expect(await snapshot(api)).toEqual(before)
  })

  test('every problem of the body is reported in one 422, and nothing is stored', async () => {
    const before = await snapshot(api)
    const r = await api.post(`/v1/hosts/${shop}/data_maps`, {
      schema_id: 'not-a-uuid',
      id: 'also-not',
      extra: 1,
      map: {
        item_selector: 'li..card',
        colour: 'red',
        fields: [
          { name: 'title', selector: 'h1[' },
          { name: 'price', selector: '.price', type: 'money', colour: 'red' },
          { name: 'title', selector: 'h2', multiple: 'yes' },
          { name: 'author', selector: '.byline', attr: 'href', fields: [{ name: 'name', selector: 'a >' }] },
          { selector: 'p' },
        ],
      },
    })
    expect(r.status).toBe(422)
    expect(r.body.error).toBe('validation')
    const byField = Object.fromEntries(r.body.fields.map((f: { field: string; errors: string[] }) => [f.field, f.errors]))
    expect(byField).toEqual({
      schema_id: ['must be a uuid'],
      id: ['must be a uuid'],
      extra: ['is not a known field'],
      'map.colour': ['is not a known field'],
      'map.item_selector': ['is not a valid CSS selector: ".card" is not a class name'],
      'map.fields[0].selector': ['is not a valid CSS selector: expected a name, found the end of the selector'],
      'map.fields[1].type': ['must be one of "string", "number", "integer", "boolean", "url", "date"'],
      'map.fields[1].colour': ['is not a known field'],
      'map.fields[2].multiple': ['must be a boolean'],
      'map.fields[2].name': ['repeats the name of map.fields[0]'],
      'map.fields[3].attr': ['must not be set on a field with nested fields'],
      'map.fields[3].fields[0].selector': ['is not a valid CSS selector: ends with the combinator ">"'],
      'map.fields[4].name': ['is required'],
    })
    expect(await snapshot(api)).toEqual(before)
  })

  test('required parts, empty lists and wrong shapes', async () => {
    const fieldsOf = async (body: unknown) => (await api.post(`/v1/hosts/${shop}/data_maps`, body)).body.fields
    expect(await fieldsOf({})).toEqual([
      { field: 'schema_id', errors: ['is required'] },
      { field: 'map', errors: ['is required'] },
    ])
    expect(await fieldsOf({ schema_id: SCHEMA, map: { fields: [] } })).toEqual([{ field: 'map.fields', errors: ['must have at least 1 item'] }])
    expect(await fieldsOf({ schema_id: SCHEMA, map: { fields: [{ name: 'a', selector: ' ' }] } })).toEqual([{ field: 'map.fields[0].selector', errors: ['must not be empty'] }])
    expect(await fieldsOf({ schema_id: SCHEMA, map: { fields: [{ name: 'a', selector: 'b', fields: [] }], item_selector: '' } })).toEqual([
      { field: 'map.fields[0].fields', errors: ['must have at least 1 item'] },
      { field: 'map.item_selector', errors: ['must not be empty'] },
    ])
    expect(await fieldsOf({ schema_id: SCHEMA, map: 'fields' })).toEqual([{ field: 'map', errors: ['must be an object'] }])
    const bad = await api.call('POST', `/v1/hosts/${shop}/data_maps`, { raw: '{"schema_id":', headers: { 'content-type': 'application/json' } })
    expect(bad.status).toBe(422)
    expect(bad.body.fields[0].field).toBe('body')
  })
})

describe('GET, PUT and DELETE /v1/data_maps/{map_id}', () => {
  test('GET answers 404 for an unknown id and 422 for a malformed one', async () => {
    expect((await api.get(`/v1/data_maps/${crypto.randomUUID()}`)).body).toEqual({ error: 'not_found', message: 'data map not found' })
    expect((await api.get('/v1/data_maps/nope')).body).toEqual({ error: 'validation', fields: [{ field: 'map_id', errors: ['must be a uuid'] }] })
  })

  test('PUT changes only the supplied fields and moves updated_at', async () => {
    const created = (await create(shop)).body
    const renamed = await api.put(`/v1/data_maps/${created.id}`, { schema_id: OTHER_SCHEMA })
    expect(renamed.status).toBe(200)
    expect(renamed.body).toEqual({ ...created, schema_id: OTHER_SCHEMA, updated_at: expect.any(String) })
    expect(renamed.body.updated_at > created.updated_at).toBe(true)

    const map = { item_selector: 'article', fields: [{ name: 'body', selector: 'p', multiple: true }] }
    const remapped = await api.put(`/v1/data_maps/${created.id}`, { map })
    expect(remapped.body).toEqual({ ...created, schema_id: OTHER_SCHEMA, map, updated_at: expect.any(String) })
    expect(remapped.body.updated_at > renamed.body.updated_at).toBe(true)

    const untouched = await api.put(`/v1/data_maps/${created.id}`, {})
    expect(untouched.body).toEqual({ ...remapped.body, updated_at: expect.any(String) })
    expect((await api.get(`/v1/data_maps/${created.id}`)).body).toEqual(untouched.body)
  })

  test('a rejected PUT changes nothing; an unknown id is a 404 after validation', async () => {
    const created = (await create(shop)).body
    const before = await snapshot(api)
    const bad = await api.put(`/v1/data_maps/${created.id}`, { schema_id: 'x', map: { fields: [{ name: 'a', selector: 'a::' }] }, host: shop })
    expect(bad.status).toBe(422)
    expect(bad.body.fields).toEqual([
      { field: 'host', errors: ['is not a known field'] },
      { field: 'schema_id', errors: ['must be a uuid'] },
      { field: 'map.fields[0].selector', errors: ['is not a valid CSS selector: expected a name, found "::"'] },
    ])
    expect((await api.get(`/v1/data_maps/${created.id}`)).body).toEqual(created)
    expect(await snapshot(api)).toEqual(before)
    expect((await api.put(`/v1/data_maps/${crypto.randomUUID()}`, { schema_id: SCHEMA })).status).toBe(404)
    expect((await api.put(`/v1/data_maps/${crypto.randomUUID()}`, { schema_id: 'x' })).status).toBe(422)
  })

  test('DELETE removes the map; a second DELETE is a 404', async () => {
    const created = (await create(blog)).body
    const before = await snapshot(api)
    const r = await api.del(`/v1/data_maps/${created.id}`)
    expect(r.status).toBe(204)
    expect(r.text).toBe('')
    expect(await snapshot(api)).toEqual({ ...before, data_maps: before.data_maps - 1 })
    expect((await api.get(`/v1/data_maps/${created.id}`)).status).toBe(404)
    expect((await api.del(`/v1/data_maps/${created.id}`)).status).toBe(404)
  })
})

describe('listing', () => {
  test('newest first, with every filter of both list routes', async () => {
    const t = testApi()
    try {
      const [a, b] = (await t.put('/v1/hosts', { hosts: ['a.example', 'b.example'] })).body.data.map((h: { hash: string }) => h.hash)
      const mk = async (host: string, schema_id: string) => {
        const map = (await t.post(`/v1/hosts/${host}/data_maps`, { schema_id, map: MAP })).body
        await Bun.sleep(3)
        return map
      }
      const m1 = await mk(a, SCHEMA)
      const m2 = await mk(b, SCHEMA)
      const m3 = await mk(a, OTHER_SCHEMA)
      const m4 = await mk(b, OTHER_SCHEMA)
      const ids = async (path: string, q: [string, string][] = []) => {
        const r = await t.get(`${path}${qs(q)}`)
        expect(r.status).toBe(200)
        return r.body.data.map((m: { id: string }) => [m1, m2, m3, m4].findIndex((x) => x.id === m.id) + 1)
      }
      expect(await ids('/v1/data_maps')).toEqual([4, 3, 2, 1])
      expect(
        await ids('/v1/data_maps', [
          ['include_ids', m1.id],
          ['include_ids', m3.id],
        ]),
      ).toEqual([3, 1])
      expect(
        await ids('/v1/data_maps', [
          ['exclude_ids', m4.id],
          ['exclude_ids', m1.id],
        ]),
      ).toEqual([3, 2])
      expect(await ids('/v1/data_maps', [['host_hashes', a]])).toEqual([3, 1])
      expect(await ids('/v1/data_maps', [['hosts', 'B.Example']])).toEqual([4, 2])
      expect(
        await ids('/v1/data_maps', [
          ['hosts', 'a.example'],
          ['host_hashes', b],
        ]),
      ).toEqual([])
      expect(await ids('/v1/data_maps', [['hosts', 'nowhere.example']])).toEqual([])
      expect(await ids('/v1/data_maps', [['schema_ids', OTHER_SCHEMA]])).toEqual([4, 3])
      expect(await ids('/v1/data_maps', [['created_after', m2.created_at]])).toEqual([4, 3])
      expect(await ids('/v1/data_maps', [['created_before', m2.created_at]])).toEqual([1])
      expect(
        await ids('/v1/data_maps', [
          ['created_after', m1.created_at],
          ['created_before', m4.created_at],
          ['schema_ids', SCHEMA],
        ]),
      ).toEqual([2])
      expect(await ids(`/v1/hosts/${a}/data_maps`)).toEqual([3, 1])
      expect(await ids(`/v1/hosts/${b}/data_maps`, [['schema_ids', SCHEMA]])).toEqual([2])
      expect(
        await ids(`/v1/hosts/${b}/data_maps`, [
          ['include_ids', m2.id],
          ['include_ids', m3.id],
        ]),
      ).toEqual([2])
      expect(await ids(`/v1/hosts/${a}/data_maps`, [['exclude_ids', m3.id]])).toEqual([1])
      expect(await ids(`/v1/hosts/${a}/data_maps`, [['created_after', m1.created_at]])).toEqual([3])
      expect(await ids(`/v1/hosts/${a}/data_maps`, [['created_before', m3.created_at]])).toEqual([1])

      const first = await t.get(`/v1/data_maps${qs([['per_page', 3]])}`)
      expect(first.body.data.map((m: { id: string }) => m.id)).toEqual([m4.id, m3.id, m2.id])
      const second = await t.get(
        `/v1/data_maps${qs([
          ['per_page', 3],
          ['page', first.body.next_page],
        ])}`,
      )
      expect(second.body).toEqual({ data: [m1], next_page: null })
      const hostPage = await t.get(`/v1/hosts/${a}/data_maps${qs([['per_page', 1]])}`)
      expect(hostPage.body).toEqual({ data: [m3], next_page: expect.any(String) })
      expect((await t.get(`/v1/hosts/${a}/data_maps${qs([['page', hostPage.body.next_page]])}`)).body).toEqual({ data: [m1], next_page: null })
    } finally {
      await t.close()
    }
  })

  test('bad filters are 422s naming the parameter; an unknown host is a 404', async () => {
    const fields = async (path: string) => (await api.get(path)).body.fields
    expect(
      await fields(
        `/v1/data_maps${qs([
          ['schema_ids', 'x'],
          ['host_hashes', 'y'],
          ['created_after', 'noon'],
          ['per_page', 0],
          ['page', '!!'],
        ])}`,
      ),
    ).toEqual([
      { field: 'per_page', errors: ['must be >= 1'] },
      { field: 'host_hashes[0]', errors: ['must be 32 lowercase hex characters'] },
      { field: 'schema_ids[0]', errors: ['must be a uuid'] },
      { field: 'created_after', errors: ['must be an RFC 3339 date-time'] },
    ])
    expect(
      await fields(
        `/v1/hosts/${shop}/data_maps${qs([
          ['hosts', 'shop.example'],
          ['labels[a]', 'b'],
        ])}`,
      ),
    ).toEqual([
      { field: 'hosts', errors: ['is not a known query parameter'] },
      { field: 'labels[a]', errors: ['is not a known query parameter'] },
    ])
    expect((await api.get(`/v1/data_maps${qs([['page', '!!']])}`)).body.fields).toEqual([{ field: 'page', errors: ['is not a cursor this service issued'] }])
    expect((await api.get(`/v1/hosts/${'f'.repeat(32)}/data_maps`)).body).toEqual({ error: 'not_found', message: 'host not found' })
  })
})

describe('POST /v1/data_maps/{map_id}/apply', () => {
  const PAGE = `<html><body><h1>  Night  ferry </h1><a href="/timetable?day=sat">Times</a>
    <ul><li class="sailing"><b>08:15</b><i>€12.50</i></li><li class="sailing"><b>11:40</b><i>sold out</i></li></ul></body></html>`

  test('extracts from base64 HTML; a relative url is an error, not resolved against the host domain', async () => {
    const { id } = (await create(blog)).body
    const r = await api.post(`/v1/data_maps/${id}/apply`, { content: b64(PAGE) })
    expect(r.status).toBe(200)
    expect(r.body).toEqual({
      data: { title: 'Night ferry', link: null },
      errors: [{ field: 'link', error: 'invalid', message: '"/timetable?day=sat" is relative, and there is no page URL or absolute <base href> to resolve it against' }],
    })
  })

  describe('url values: the page URL is unknown, so only absolute ones and an absolute <base href> resolve', () => {
    // A page served at http://127.0.0.1:18123/docs/: the host's domain carries neither its
    // scheme nor its port, so nothing may be resolved against the domain.
    const LINKS = `<a class="rel" href="sql-createlanguage.html">r</a><a class="root" href="/sql-createlanguage.html">o</a>
      <a class="proto" href="//cdn.example/x.js">p</a><a class="abs" href="http://127.0.0.1:18123/docs/abs.html?x=1#top">a</a>
      <a class="frag" href="#top">f</a><a class="js" href="javascript:void(0)">j</a><img src="img/logo.png">`
    const page = (head: string) => `<html><head>${head}</head><body>${LINKS}</body></html>`
    const url = (name: string, selector: string, attr = 'href') => ({ name, selector, attr, type: 'url' })
    const LINK_MAP = {
      fields: [
        url('rel', 'a.rel'),
        url('root', 'a.root'),
        url('proto', 'a.proto'),
        url('abs', 'a.abs'),
        url('frag', 'a.frag'),
        url('js', 'a.js'),
        url('img', 'img', 'src'),
        { name: 'written', selector: 'a.root', attr: 'href' },
        { ...url('all', 'a'), multiple: true },
      ],
    }
    const ABS = 'http://127.0.0.1:18123/docs/abs.html?x=1#top'
    const relative = (text: string) => `"${text}" is relative, and there is no page URL or absolute <base href> to resolve it against`
    const JS = '"javascript:void(0)" is not an http(s) URL'
    let local: string
    let mapId: string
    beforeAll(async () => {
      local = (await api.put('/v1/hosts', { hosts: ['127.0.0.1'] })).body.data[0].hash
      mapId = (await create(local, { map: LINK_MAP })).body.id
    })
    const apply = async (html: string) => {
      const r = await api.post(`/v1/data_maps/${mapId}/apply`, { content: b64(html) })
      expect(r.status).toBe(200)
      return r.body
    }

    const UNRESOLVED = {
      data: { rel: null, root: null, proto: null, abs: ABS, frag: null, js: null, img: null, written: '/sql-createlanguage.html', all: [null, null, null, ABS, null, null] },
      errors: [
        { field: 'rel', error: 'invalid', message: relative('sql-createlanguage.html') },
        { field: 'root', error: 'invalid', message: relative('/sql-createlanguage.html') },
        { field: 'proto', error: 'invalid', message: relative('//cdn.example/x.js') },
        { field: 'frag', error: 'invalid', message: relative('#top') },
        { field: 'js', error: 'invalid', message: JS },
        { field: 'img', error: 'invalid', message: relative('img/logo.png') },
        { field: 'all[0]', error: 'invalid', message: relative('sql-createlanguage.html') },
        { field: 'all[1]', error: 'invalid', message: relative('/sql-createlanguage.html') },
        { field: 'all[2]', error: 'invalid', message: relative('//cdn.example/x.js') },
        { field: 'all[4]', error: 'invalid', message: relative('#top') },
        { field: 'all[5]', error: 'invalid', message: JS },
      ],
    }

    test('without <base href>: absolute values kept, relative, root-relative and protocol-relative ones reported', async () => {
      expect(await apply(page(''))).toEqual(UNRESOLVED)
    })

    test.each([['/docs/'], ['docs/'], ['//127.0.0.1:18123/docs/'], ['javascript:void(0)']])('a <base href="%s"> that is not absolute http(s) resolves nothing', async (href) => {
      expect(await apply(page(`<base href="${href}">`))).toEqual(UNRESOLVED)
    })

    test('an absolute <base href> resolves every relative form, its scheme and port kept', async () => {
      const base = 'http://127.0.0.1:18123/docs/'
      const resolved = {
        rel: `${base}sql-createlanguage.html`,
        root: 'http://127.0.0.1:18123/sql-createlanguage.html',
        proto: 'http://cdn.example/x.js',
        abs: ABS,
        frag: `${base}#top`,
      }
      expect(await apply(page(`<base href="${base}">`))).toEqual({
        data: { ...resolved, js: null, img: `${base}img/logo.png`, written: '/sql-createlanguage.html', all: [...Object.values(resolved), null] },
        errors: [
          { field: 'js', error: 'invalid', message: JS },
          { field: 'all[5]', error: 'invalid', message: JS },
        ],
      })
    })

    test('in a parse pipeline the same map resolves against the page URL, its scheme and port kept', async () => {
      const r = await api.post('/v1/parse', {
        url: 'http://127.0.0.1:18123/docs/page.html',
        body: b64(page('')),
        content_type: 'text/html',
        pipelines: [{ steps: [{ kind: 'data_map', id: mapId }] }],
      })
      expect(r.status).toBe(200)
      const resolved = [
        'http://127.0.0.1:18123/docs/sql-createlanguage.html',
        'http://127.0.0.1:18123/sql-createlanguage.html',
        'http://cdn.example/x.js',
        ABS,
        'http://127.0.0.1:18123/docs/page.html#top',
      ]
      const [rel, root, proto, abs, frag] = resolved
      expect(r.body.pipelines[0].steps).toEqual([
        {
          kind: 'data_map',
          id: mapId,
          data: { rel, root, proto, abs, frag, js: null, img: 'http://127.0.0.1:18123/docs/img/logo.png', written: '/sql-createlanguage.html', all: [...resolved, null] },
          errors: [
            { field: 'js', error: 'invalid', message: JS },
            { field: 'all[5]', error: 'invalid', message: JS },
          ],
        },
      ])
    })
  })

  test('an item list, with errors by item; a required field that is missing is reported', async () => {
    const map = {
      item_selector: 'li.sailing',
      fields: [
        { name: 'departs', selector: 'b', required: true },
        { name: 'fare', selector: 'i', type: 'number' },
        { name: 'note', selector: 'em', required: true },
      ],
    }
    const { id } = (await create(shop, { map })).body
    const r = await api.post(`/v1/data_maps/${id}/apply`, { content: b64(PAGE) })
    expect(r.body).toEqual({
      data: [
        { departs: '08:15', fare: 12.5, note: null },
        { departs: '11:40', fare: null, note: null },
      ],
      errors: [
        { field: '[0].note', error: 'required', message: 'no element matches "em"' },
        { field: '[1].fare', error: 'invalid', message: '"sold out" holds no number' },
        { field: '[1].note', error: 'required', message: 'no element matches "em"' },
      ],
    })
  })

  test('bytes are decoded by their declared charset', async () => {
    const { id } = (
      await create(shop, {
        map: {
          fields: [
            { name: 'name', selector: 'h1.name' },
            { name: 'dealer', selector: 'a.haendler', attr: 'href', type: 'url' },
          ],
        },
      })
    ).body
    const bytes = new Uint8Array(await Bun.file(join(import.meta.dir, '../fixtures/extract/windows-1252.html')).arrayBuffer())
    const r = await api.post(`/v1/data_maps/${id}/apply`, { content: b64(bytes) })
    expect(r.body).toEqual({
      data: { name: 'Kaffeemühle „Bärenstark“ – Edelstahl', dealer: null },
      errors: [{ field: 'dealer', error: 'invalid', message: '"/haendler/m%C3%BCller" is relative, and there is no page URL or absolute <base href> to resolve it against' }],
    })
    const based = await api.post(`/v1/data_maps/${id}/apply`, { content: b64(new Uint8Array([...Buffer.from('<base href="https://shop.example/de/">'), ...bytes])) })
    expect(based.body).toEqual({ data: { name: 'Kaffeemühle „Bärenstark“ – Edelstahl', dealer: 'https://shop.example/haendler/m%C3%BCller' }, errors: [] })
  })

  test('line-wrapped, unpadded and URL-safe base64 are accepted', async () => {
    const { id } = (await create(blog)).body
    const html = '<h1>ok?></h1><a href="https://blog.example/?q=>>>">x</a>'
    const standard = b64(html)
    expect(standard).toMatch(/[+/]/)
    const expected = { data: { title: 'ok?>', link: 'https://blog.example/?q=%3E%3E%3E' }, errors: [] }
    for (const content of [standard, standard.replace(/(.{8})/g, '$1\r\n'), standard.replace(/=+$/, ''), Buffer.from(html).toString('base64url')]) {
      const r = await api.post(`/v1/data_maps/${id}/apply`, { content })
      expect(r.status).toBe(200)
      expect(r.body).toEqual(expected)
    }
  })

  test('content that is not base64 or empty is a 422 on content, before the 404; none or two sources a 422 on body', async () => {
    const { id } = (await create(blog)).body
    const problem = async (body: unknown, mapId = id) => {
      const r = await api.post(`/v1/data_maps/${mapId}/apply`, body)
      expect(r.status).toBe(422)
      return r.body.fields
    }
    const notBase64 = [{ field: 'content', errors: ['must be base64-encoded'] }]
    expect(await problem({ content: '<h1>raw html</h1>' })).toEqual(notBase64)
    expect(await problem({ content: 'aGVsbG8=!' })).toEqual(notBase64)
    expect(await problem({ content: 'aGVs bG8$' })).toEqual(notBase64)
    expect(await problem({ content: 'a' })).toEqual(notBase64)
    expect(await problem({ content: 'ab+c_d==' })).toEqual(notBase64)
    expect(await problem({ content: '<p>' }, crypto.randomUUID())).toEqual(notBase64)
    expect(await problem({ content: '' })).toEqual([{ field: 'content', errors: ['must not be empty'] }])
    expect(await problem({})).toEqual([{ field: 'body', errors: ['must have exactly one of content, url and artifact_id'] }])
    expect(await problem({ content: b64('<p>'), url: 'https://x.example/' })).toEqual([{ field: 'body', errors: ['must have exactly one of content, url and artifact_id, not content and url'] }])
    expect((await api.post(`/v1/data_maps/${crypto.randomUUID()}/apply`, { content: b64('<p>') })).body).toEqual({ error: 'not_found', message: 'data map not found' })
  })

  test('decoded content is capped at TRAWL_MAX_BODY_BYTES', async () => {
    const t = testApi({ TRAWL_MAX_BODY_BYTES: '1024' })
    try {
      const host = (await t.put('/v1/hosts', { hosts: ['cap.example'] })).body.data[0].hash
      const { id } = (await t.post(`/v1/hosts/${host}/data_maps`, { schema_id: SCHEMA, map: MAP })).body
      const fits = `<h1>${'x'.repeat(1015)}</h1>`
      expect(fits.length).toBe(1024)
      expect((await t.post(`/v1/data_maps/${id}/apply`, { content: b64(fits) })).status).toBe(200)
      const over = [{ field: 'content', errors: ['must decode to at most 1024 bytes'] }]
      expect((await t.post(`/v1/data_maps/${id}/apply`, { content: b64(`${fits}!`) })).body.fields).toEqual(over)
      expect((await t.post(`/v1/data_maps/${id}/apply`, { content: 'A'.repeat(100_000) })).body.fields).toEqual(over)
    } finally {
      await t.close()
    }
  })
})

describe('tenants', () => {
  test("another tenant's map answers 404 everywhere and its lists stay empty", async () => {
    const mine = (await create(shop)).body
    const B = { tenant: 'tenant-b' }
    expect((await api.get(`/v1/data_maps/${mine.id}`, B)).status).toBe(404)
    expect((await api.put(`/v1/data_maps/${mine.id}`, { schema_id: OTHER_SCHEMA }, B)).status).toBe(404)
    expect((await api.post(`/v1/data_maps/${mine.id}/apply`, { content: b64('<h1>x</h1>') }, B)).status).toBe(404)
    expect((await api.del(`/v1/data_maps/${mine.id}`, B)).status).toBe(404)
    expect((await api.get(`/v1/hosts/${shop}/data_maps`, B)).status).toBe(404)
    expect((await create(shop, {}, B)).status).toBe(404)
    expect((await api.get('/v1/data_maps', B)).body).toEqual({ data: [], next_page: null })
    expect((await api.get(`/v1/data_maps${qs([['include_ids', mine.id]])}`, B)).body).toEqual({ data: [], next_page: null })
    expect((await api.get(`/v1/data_maps${qs([['host_hashes', shop]])}`, B)).body).toEqual({ data: [], next_page: null })
    expect((await api.get(`/v1/data_maps/${mine.id}`)).body).toEqual(mine)
  })

  test('the tenant header is checked before anything else', async () => {
    const r = await api.call('POST', `/v1/hosts/${shop}/data_maps`, { tenant: null, body: { schema_id: 'x' } })
    expect(r.status).toBe(400)
    expect(r.body.error).toBe('tenant_required')
  })
})

describe('store.dataMaps.get', () => {
  test("answers the definition and the host's domain for the parse pipeline", async () => {
    const created = (await create(blog)).body
    expect(await api.store.dataMaps.get('acme', created.id)).toEqual(created)
    expect((await api.store.dataMaps.get('acme', created.id))!.host.domain).toBe('blog.example')
    expect(await api.store.dataMaps.get('someone-else', created.id)).toBeNull()
  })
})
