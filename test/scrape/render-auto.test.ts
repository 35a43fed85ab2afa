// TRAWL_SCRAPE_RENDER=auto (docs/scrape.md "Rendering", decision 94): the standard client first,
// Chromium only for pages that need script to show their content. A static page (with a script
// of its own) must start no Chromium and answer as `never` does; a page whose content a bundle
// writes into an empty root must be rendered. Whether Chromium ran is read three ways: the
// answer's `rendered`, the fixture's log of requests (only a browser asks for the bundle) and
// the browser client's "chromium started" line. Real Chromium (TRAWL_CHROMIUM or `chromium`).
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { tmpdir } from 'node:os'
import { loadConfig } from '../../src/config'
import { testScrape, type TestScrape } from '../helpers/scrape'

const WORDS = 'The harbour board met on Tuesday to hear the case for a second night shift at the quay. '.repeat(30)
// Static: the text is in the HTML; its script only decorates (and would leave a mark if it ran),
// and its <noscript> asks for JavaScript for a comment widget only.
const STATIC = `<!doctype html><html lang="en"><head><title>Quay news</title><script src="/static.js"></script></head>
<body><main><h1>Night shift at the quay</h1><p>${WORDS}</p><noscript>Enable JavaScript for comments.</noscript></main></body></html>`
// A single-page app as create-react-app builds it: an empty root, a bundle, a <noscript> plea.
const APP = `<!doctype html><html lang="en"><head><title>Fleet</title><script defer src="/app.js"></script></head>
<body><noscript>You need to enable JavaScript to run this app.</noscript><div id="root"></div></body></html>`
const APP_JS = `document.getElementById('root').innerHTML = '<article><h1>Fleet list</h1><p>Written by the bundle: three cranes, two tugs.</p></article>'`
// An empty mount point between a header and a footer that have text of their own.
const MOUNT = `<!doctype html><html><head><title>Timetable</title></head><body>
<header>${'Home Routes Fares Timetables Contact Help '.repeat(8)}</header><div id="app"></div>
<footer>${'Harbour Transport Authority, Quay Street 1. '.repeat(4)}</footer><script type="module" src="/mount.js"></script></body></html>`
const MOUNT_JS = `document.getElementById('app').innerHTML = '<h2>Departures</h2><p>Ferry to Northport at 09:40.</p>'`

let site: ReturnType<typeof Bun.serve>
let origin: string
const requested: string[] = []
const open: TestScrape[] = []
// One auto surface for the tests in order: its Chromium is started (once) by the second test.
let auto: TestScrape

beforeAll(() => {
  site = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    fetch(req) {
      const path = new URL(req.url).pathname
      requested.push(path)
      const answer = (body: string, type: string) => new Response(body, { headers: { 'content-type': type } })
      if (path === '/static') return answer(STATIC, 'text/html; charset=utf-8')
      if (path === '/static.js') return answer(`addEventListener('DOMContentLoaded', () => document.body.insertAdjacentHTML('beforeend', '<p>made by script</p>'))`, 'text/javascript')
      if (path === '/app') return answer(APP, 'text/html; charset=utf-8')
      if (path === '/app.js') return answer(APP_JS, 'text/javascript')
      if (path === '/mount') return answer(MOUNT, 'text/html')
      if (path === '/mount.js') return answer(MOUNT_JS, 'text/javascript')
      if (path === '/data.json') return answer('{"shell":true}', 'application/json')
      return new Response('no', { status: 404 })
    },
  })
  origin = `http://127.0.0.1:${site.port}`
  auto = scrapeWith({ TRAWL_SCRAPE_RENDER: 'auto' })
})
afterAll(async () => {
  await Promise.all(open.map((s) => s.close()))
  site.stop(true)
})

function scrapeWith(env: Record<string, string>) {
  const s = testScrape({ TRAWL_ALLOW_PRIVATE_NETWORKS: 'true', TRAWL_SCRAPE_RATE: 'off', ...env })
  open.push(s)
  return s
}
const post = (s: TestScrape, body: unknown) => s.post('/v1/scrape', body, { tenant: null })
const launched = (s: TestScrape) => s.logs.filter((l) => l.includes('chromium started')).length

describe('TRAWL_SCRAPE_RENDER=auto', () => {
  test('is the default setting', () => {
    expect(loadConfig(['--data-dir', tmpdir()], {}).config.scrapeRender).toBe('auto')
  })

  test('a static page starts no Chromium and answers exactly as never; a script-built page is rendered', async () => {
    const never = scrapeWith({ TRAWL_SCRAPE_RENDER: 'never' })
    const formats = [{ kind: 'markdown' }, { kind: 'html' }]
    const a = await post(auto, { url: `${origin}/static`, formats })
    expect(a.status).toBe(200)
    expect(a.body.rendered).toBe(false)
    expect(a.body).toEqual((await post(never, { url: `${origin}/static`, formats })).body)
    expect(a.body.results[0].content).toContain('# Night shift at the quay')
    expect(a.body.results[0].content).not.toContain('made by script')
    expect(a.body.results[1].content).toBe(STATIC)
    expect(requested).not.toContain('/static.js')
    expect(launched(auto)).toBe(0)

    const r = await post(auto, { url: `${origin}/app`, formats })
    expect(r.status).toBe(200)
    expect(r.body.rendered).toBe(true)
    expect(r.body.results[0].content).toContain('# Fleet list')
    expect(r.body.results[0].content).toContain('Written by the bundle: three cranes, two tugs.')
    expect(r.body.results[1].content).toContain('<div id="root"><article><h1>Fleet list</h1>')
    expect(r.body.metadata.title).toBe('Fleet')
    expect(requested).toContain('/app.js')
    expect(launched(auto)).toBe(1)

    // Chromium runs now; a static page still is not rendered.
    const again = await post(auto, { url: `${origin}/static` })
    expect(again.body.rendered).toBe(false)
    expect(requested).not.toContain('/static.js')

    // The same script-built page under never: the empty shell, unrendered.
    const shell = await post(never, { url: `${origin}/app` })
    expect(shell.body.rendered).toBe(false)
    expect(shell.body.results[0].content).not.toContain('Fleet list')
    expect(launched(never)).toBe(0)
  }, 30_000)

  test('an empty app root is rendered even with header and footer text around it', async () => {
    const r = await post(auto, { url: `${origin}/mount`, formats: [{ kind: 'markdown', main_content: false }] })
    expect(r.status).toBe(200)
    expect(r.body.rendered).toBe(true)
    expect(r.body.results[0].content).toContain('Ferry to Northport at 09:40.')
    expect(requested).toContain('/mount.js')
  }, 30_000)

  test('content that is not HTML is never rendered', async () => {
    const fresh = scrapeWith({ TRAWL_SCRAPE_RENDER: 'auto' })
    const r = await post(fresh, { url: `${origin}/data.json` })
    expect(r.body).toMatchObject({ rendered: false, results: [{ kind: 'markdown', content: '{"shell":true}' }] })
    expect(launched(fresh)).toBe(0)
  })

  test('when Chromium cannot be started, auto answers the page as fetched; always fails with browser_unavailable', async () => {
    const missing = '/nonexistent/chromium-for-trawl-tests'
    const auto = scrapeWith({ TRAWL_SCRAPE_RENDER: 'auto', TRAWL_CHROMIUM: missing })
    const r = await post(auto, { url: `${origin}/app` })
    expect(r.status).toBe(200)
    expect(r.body.rendered).toBe(false)
    expect(r.body.metadata.title).toBe('Fleet')
    expect(r.body.results[0].content).not.toContain('Fleet list')
    const always = scrapeWith({ TRAWL_SCRAPE_RENDER: 'always', TRAWL_CHROMIUM: missing })
    const failed = await post(always, { url: `${origin}/static` })
    expect(failed.status).toBe(500)
    expect(failed.body.error).toBe('browser_unavailable')
  })
})
