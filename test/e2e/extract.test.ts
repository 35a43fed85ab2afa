// End-to-end: `trawl extract URL --fields FILE` in the compiled binary, against a 127.0.0.1
// fixture server started here; a stored data map comes from a data dir's store written by the real Store.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import type { DataMapDef } from '../../src/extract/data-map'
import { cleanup, ensureBinary, runBinary, tempDir } from '../helpers/binary'
import { storeWhere, writeStore } from '../helpers/binary-engine'
import { unusedPort } from '../helpers/fixture-site'

const PAGE = `<html><head><title>Timetable</title></head><body><h1>Night ferry</h1>
  <ul><li class="sailing" data-id="s1"><a href="book/s1">08:15</a><i>€12.50</i></li>
      <li class="sailing" data-id="s2"><a href="/book/s2">11:40</a><i>sold out</i></li></ul></body></html>`
const MAP: DataMapDef = {
  item_selector: 'li.sailing',
  fields: [
    { name: 'id', selector: ':scope', attr: 'data-id' },
    { name: 'book', selector: 'a', attr: 'href', type: 'url' },
    { name: 'fare', selector: 'i', type: 'number' },
  ],
}

let site: ReturnType<typeof Bun.serve>
let origin: string
let hits = 0
let dir: string
const file = (name: string, body: unknown) => {
  const path = join(dir, name)
  writeFileSync(path, typeof body === 'string' ? body : JSON.stringify(body))
  return path
}

beforeAll(async () => {
  await ensureBinary()
  site = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    fetch(req) {
      const url = new URL(req.url)
      hits++
      if (url.pathname === '/ferry') return Response.redirect('/ferry/times', 302)
      if (url.pathname === '/ferry/times') return new Response(PAGE, { headers: { 'content-type': 'text/html; charset=utf-8' } })
      if (url.pathname === '/logo.png') return new Response(new Uint8Array([137, 80, 78, 71]), { headers: { 'content-type': 'image/png' } })
      return new Response('<h1>Not here</h1>', { status: 404, headers: { 'content-type': 'text/html' } })
    },
  })
  origin = `http://127.0.0.1:${site.port}`
  dir = tempDir()
}, 180_000)
afterAll(async () => {
  await cleanup()
  site.stop(true)
})

describe('trawl extract', () => {
  test('prints what a list of fields extracts, as pretty JSON; relative urls resolve against where redirects ended', async () => {
    const fields = file('fields.json', [
      { name: 'title', selector: 'h1' },
      { name: 'times', selector: 'li a', multiple: true },
      { name: 'first', selector: 'li a', attr: 'href', type: 'url' },
    ])
    const r = await runBinary(['extract', `${origin}/ferry`, '--fields', fields])
    expect(r.stderr).toBe('')
    expect(r.code).toBe(0)
    expect(r.stdout).toBe(`${JSON.stringify({ title: 'Night ferry', times: ['08:15', '11:40'], first: `${origin}/ferry/book/s1` }, null, 2)}\n`)
  })

  test("a data map's definition in the file gives one object per item; extraction errors are lines on stderr, exit 0", async () => {
    const r = await runBinary(['extract', `${origin}/ferry/times`, '--fields', file('map.json', MAP), '--timeout', '5'])
    expect(r.code).toBe(0)
    expect(JSON.parse(r.stdout)).toEqual([
      { id: 's1', book: `${origin}/ferry/book/s1`, fare: 12.5 },
      { id: 's2', book: `${origin}/book/s2`, fare: null },
    ])
    expect(r.stderr).toBe('trawl extract: [1].fare: "sold out" holds no number\n')
  })

  test('--data-map applies a stored map of the data dir (tenant local unless --tenant)', async () => {
    const dataDir = tempDir()
    const map = await writeStore(dataDir, async (store) => {
      const host = (await store.hosts.upsert('local', ['127.0.0.1']))[0]!
      return (await store.dataMaps.create('local', host.hash, { id: crypto.randomUUID(), schema_id: crypto.randomUUID(), map: MAP }))!
    })
    const r = await runBinary(['extract', `${origin}/ferry`, '--data-map', map.id, '--data-dir', dataDir])
    expect(r.code).toBe(0)
    expect(JSON.parse(r.stdout).map((s: { book: string }) => s.book)).toEqual([`${origin}/ferry/book/s1`, `${origin}/book/s2`])
    const other = await runBinary(['extract', `${origin}/ferry`, '--data-map', map.id, '--data-dir', dataDir, '--tenant', 'acme'])
    expect(other.code).toBe(2)
    expect(other.stderr).toBe(`trawl: --data-map: tenant acme has no data map ${map.id} in ${await storeWhere(dataDir)}\n`)
  })

  test('a page that cannot be fetched or read is one line on stderr and exit 1', async () => {
    const fields = file('one.json', [{ name: 'title', selector: 'h1' }])
    const cases: [string, RegExp][] = [
      [`http://127.0.0.1:${unusedPort()}/`, /^trawl extract: connect: .+\n$/],
      [`${origin}/missing`, new RegExp(`^trawl extract: http_status: ${origin}/missing answered HTTP 404\n$`)],
      [`${origin}/logo.png`, new RegExp(`^trawl extract: unsupported_content_type: ${origin}/logo.png is image/png; a data map applies to HTML and XHTML\n$`)],
    ]
    for (const [url, stderr] of cases) {
      const r = await runBinary(['extract', url, '--fields', fields])
      expect(r.code).toBe(1)
      expect(r.stdout).toBe('')
      expect(r.stderr).toMatch(stderr)
    }
  })

  test('bad arguments and bad fields files are one line on stderr and exit 2, before anything is fetched', async () => {
    const before = hits
    const cases: [string[], string][] = [
      [[`${origin}/ferry`], 'trawl: extract needs one of --fields FILE and --data-map ID\n'],
      [
        [`${origin}/ferry`, '--fields', file('bad-selector.json', [{ name: 'x', selector: 'li[' }])],
        'trawl: --fields: fields[0].selector is not a valid CSS selector: expected a name, found the end of the selector\n',
      ],
      [[`${origin}/ferry`, '--fields', file('not-json.json', '[{"name":')], `trawl: --fields: cannot read ${join(dir, 'not-json.json')}: JSON Parse error: Unexpected EOF\n`],
      [[`${origin}/ferry`, '--fields', join(dir, 'absent.json')], `trawl: --fields: cannot read ${join(dir, 'absent.json')}: ENOENT: no such file or directory, open '${join(dir, 'absent.json')}'\n`],
      [['ftp://127.0.0.1/', '--fields', file('ok.json', [{ name: 'x', selector: 'h1' }])], 'trawl: extract: the URL must be an absolute http or https URL, got "ftp://127.0.0.1/"\n'],
      [[`${origin}/ferry`, '--fields', join(dir, 'ok.json'), '--timeout', 'soon'], 'trawl: --timeout: must be seconds from 0.01 to 300, got "soon"\n'],
    ]
    for (const [args, stderr] of cases) {
      const r = await runBinary(['extract', ...args])
      expect(r.stderr).toBe(stderr)
      expect(r.code).toBe(2)
      expect(r.stdout).toBe('')
    }
    expect(hits).toBe(before)
  })
})
