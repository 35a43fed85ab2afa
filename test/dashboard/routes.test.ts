// The dashboard's routes (docs/dashboard.md): `/` serves the page with no tenant header, every
// file it loads (and every module those import) is served with its content type and cached for
// good under the build's prefix, and nothing in them refers to another host. The scrape port has
// no dashboard.
import { afterAll, describe, expect, test } from 'bun:test'
import { gunzipSync, gzipSync } from 'node:zlib'
import { testApi } from '../helpers/api'
import { testScrape } from '../helpers/scrape'
import { ERROR_REASONS, LOG_STATUSES, LOG_STEPS } from '../../src/store/crawl-log-types'
import { PAYMENT_STATUSES } from '../../src/store/payments'
import { RUN_OUTCOMES, STOP_REASONS } from '../../src/store/runs'
import { DELIVERY_STATUSES, WEBHOOK_EVENTS } from '../../src/store/webhook-model'

const api = testApi()
const scrape = testScrape()
afterAll(async () => {
  api.close()
  await scrape.close()
})

const get = (path: string, headers: Record<string, string> = {}) => api.app.handle(new Request(`http://trawl.test${path}`, { headers }))

type Served = { response: Response; text: string }

/** Every file the page reaches: its stylesheet, its import map's modules, and every relative import of those, followed. */
async function reachable(): Promise<Map<string, Served>> {
  const index = await (await get('/')).text()
  const found = new Map<string, Served>()
  const queue = [...index.matchAll(/(?:href|src)="(\/ui\/[^"]+)"/g)].map((m) => m[1]!)
  const map = JSON.parse(/<script type="importmap">([\s\S]*?)<\/script>/.exec(index)![1]!).imports as Record<string, string>
  queue.push(...Object.values(map))
  while (queue.length) {
    const path = queue.shift()!
    if (found.has(path)) continue
    const r = await get(path)
    const text = await r.text()
    found.set(path, { response: r, text })
    if (path.endsWith('.js') || path.endsWith('.mjs')) {
      // Statements only (at the start, or after `;` or a line break), as written and as minified.
      for (const m of text.matchAll(/(?:^|;|\n)\s*(?:import|export)\s*(?:[\w*{}\s,$]+?\s*from\s*)?["']([^"']+)["']/g)) {
        const spec = m[1]!
        queue.push(spec.startsWith('.') ? new URL(spec, `http://x${path}`).pathname : (map[spec] ?? spec))
      }
    }
  }
  return found
}

describe('the dashboard', () => {
  test("the names the pages offer as choices are the API's own lists, as the API validates them", async () => {
    const vocabulary = [...(await reachable()).entries()].find(([path]) => path.endsWith('/vocabulary.js'))
    expect(vocabulary).toBeDefined()
    const lists = Object.fromEntries([...vocabulary![1].text.matchAll(/^export const (\w+) = (.+)$/gm)].map((m) => [m[1]!, JSON.parse(m[2]!)]))
    expect(lists).toEqual({
      LOG_STEPS: [...LOG_STEPS],
      LOG_STATUSES: [...LOG_STATUSES],
      ERROR_REASONS: [...ERROR_REASONS],
      STOP_REASONS: [...STOP_REASONS],
      RUN_OUTCOMES: [...RUN_OUTCOMES],
      PAYMENT_STATUSES: [...PAYMENT_STATUSES],
      WEBHOOK_EVENTS: [...WEBHOOK_EVENTS],
      DELIVERY_STATUSES: [...DELIVERY_STATUSES],
    })
    expect(lists.ERROR_REASONS).toContain('interrupted')
  })

  test('/ is the page, with no tenant header, never cached, behind a content security policy', async () => {
    for (const headers of [{}, { 'x-tenant-id': 'acme' }, { 'x-tenant-id': 'not a tenant!' }] as Record<string, string>[]) {
      const r = await get('/', headers)
      expect(r.status).toBe(200)
      expect(r.headers.get('content-type')).toBe('text/html; charset=utf-8')
      expect(r.headers.get('cache-control')).toBe('no-cache')
      const body = await r.text()
      expect(body).toContain('<script type="module" src="/ui/')
      expect(body).not.toContain('{{UI}}')
    }
    const csp = (await get('/')).headers.get('content-security-policy')!
    expect(csp).toContain("default-src 'self'")
    expect(csp).toMatch(/script-src 'self' 'sha256-[A-Za-z0-9+/]+=*';/)
    // The policy's digest is the import map's, the page's only inline script.
    const index = await (await get('/')).text()
    const inline = /<script type="importmap">([\s\S]*?)<\/script>/.exec(index)![1]!
    expect(csp).toContain(`'sha256-${new Bun.CryptoHasher('sha256').update(inline).digest('base64')}'`)
  })

  test('every file the page reaches is served with its type, cached for good; the modules are preact, hooks and htm as they ship', async () => {
    const files = await reachable()
    const paths = [...files.keys()]
    expect(paths.length).toBeGreaterThan(15)
    for (const [path, { response: r }] of files) {
      expect([path, r.status]).toEqual([path, 200])
      expect([path, r.headers.get('content-type')]).toEqual([path, path.endsWith('.css') ? 'text/css; charset=utf-8' : 'text/javascript; charset=utf-8'])
      expect(r.headers.get('cache-control')).toBe('public, max-age=31536000, immutable')
      expect(r.headers.get('x-content-type-options')).toBe('nosniff')
    }
    const prefix = /^\/ui\/[a-z0-9]+\//.exec(paths[0]!)![0]
    expect(paths.every((p) => p.startsWith(prefix))).toBe(true)
    const shipped = async (file: string) => Bun.file(`${import.meta.dir}/../../node_modules/${file}`).text()
    expect(files.get(`${prefix}vendor/preact.mjs`)!.text).toBe(await shipped('preact/dist/preact.mjs'))
    expect(files.get(`${prefix}vendor/hooks.mjs`)!.text).toBe(await shipped('preact/hooks/dist/hooks.mjs'))
    expect(files.get(`${prefix}vendor/htm.mjs`)!.text).toBe(await shipped('htm/dist/htm.mjs'))
    const raw = [...files.values()].reduce((s, r) => s + Buffer.byteLength(r.text), 0)
    const gzip = [...files.values()].reduce((s, r) => s + gzipSync(r.text).length, 0)
    console.log(`dashboard: ${files.size} files, ${raw} bytes, ${gzip} gzipped one by one`)
  })

  test('a client that accepts gzip gets every file gzipped, the same bytes once unzipped; one that does not, the bytes as they are', async () => {
    const files = await reachable()
    let sent = 0
    for (const [path, { text }] of files) {
      const r = await get(path, { 'accept-encoding': 'gzip, deflate, br' })
      expect([path, r.headers.get('content-encoding'), r.headers.get('vary')]).toEqual([path, 'gzip', 'accept-encoding'])
      const zipped = new Uint8Array(await r.arrayBuffer())
      sent += zipped.byteLength
      expect([path, new TextDecoder().decode(gunzipSync(zipped))]).toEqual([path, text])
      const plain = await get(path, { 'accept-encoding': 'identity' })
      expect([path, plain.headers.get('content-encoding'), await plain.text()]).toEqual([path, null, text])
    }
    const raw = [...files.values()].reduce((s, r) => s + Buffer.byteLength(r.text), 0)
    expect(sent).toBeLessThan(raw / 2)
  })

  test('nothing served refers to another host (XML namespace names are names, never fetched)', async () => {
    const NAMESPACES = new Set(['http://www.w3.org/2000/svg', 'http://www.w3.org/1998/Math/MathML', 'http://www.w3.org/1999/xhtml'])
    const index = await (await get('/')).text()
    const texts = [index, ...[...(await reachable()).values()].map((f) => f.text)]
    const external = texts.flatMap((t) => [...t.matchAll(/(?:https?:)?\/\/[a-z0-9.-]+\.[a-z]{2,}[^\s'"`)]*/gi)].map((m) => m[0]).filter((u) => !NAMESPACES.has(u)))
    expect(external).toEqual([])
    expect(texts.join('\n')).not.toMatch(/@import|url\(\s*['"]?(?!data:)[a-z]+:/i)
  })

  test('another build, an unknown file, or the scrape port: 404 in the API shape', async () => {
    const stale = await get('/ui/0000000000/app.js')
    expect(stale.status).toBe(404)
    expect(await stale.json()).toEqual({ error: 'not_found', message: 'no such dashboard file' })
    const [prefix] = /\/ui\/[a-z0-9]+\//.exec(await (await get('/')).text())!
    expect((await get(`${prefix}nope.js`)).status).toBe(404)
    expect((await get(`${prefix}index.html`)).status).toBe(404) // the page is at / only
    const onScrape = await scrape.app.handle(new Request('http://trawl.test/'))
    expect(onScrape.status).toBe(404)
    expect(await onScrape.json()).toEqual({ error: 'not_found', message: 'no route for GET /' })
  })

  test('the OpenAPI document lists none of the dashboard routes', async () => {
    const doc = (await api.get('/openapi.json')).body as { paths: Record<string, unknown> }
    expect(Object.keys(doc.paths).filter((p) => p === '/' || p.startsWith('/ui'))).toEqual([])
  })
})
