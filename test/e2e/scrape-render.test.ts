// End-to-end: TRAWL_SCRAPE_RENDER=auto and `trawl scrape --render --main-content` in the compiled
// binary (decision 94). Chromium is started through a wrapper that notes each start in a file, so
// "no Chromium" is read from what ran, not inferred. Only 127.0.0.1 fixture servers are contacted.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { chmodSync, existsSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { cleanup, ensureBinary, runBinary, startTrawl, tempDir } from '../helpers/binary'

const WORDS = 'The harbour board met on Tuesday to hear the case for a second night shift at the quay. '.repeat(30)
const STATIC = `<!doctype html><html lang="en"><head><title>Quay news</title><script src="/static.js"></script></head>
<body><header><nav><a href="/">Home</a> <a href="/weather/">Weather</a></nav></header><main><h1>Night shift at the quay</h1><p>${WORDS}</p></main>
<footer><a href="/about">About the Ledger</a></footer></body></html>`
const APP = `<!doctype html><html><head><title>Fleet</title><script defer src="/app.js"></script></head>
<body><noscript>You need to enable JavaScript to run this app.</noscript><div id="root"></div></body></html>`

let site: ReturnType<typeof Bun.serve>
let origin: string
let starts: string
let env: Record<string, string>

beforeAll(async () => {
  await ensureBinary()
  site = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    fetch(req) {
      const path = new URL(req.url).pathname
      const answer = (body: string, type: string) => new Response(body, { headers: { 'content-type': type } })
      if (path === '/static') return answer(STATIC, 'text/html; charset=utf-8')
      if (path === '/static.js') return answer(`addEventListener('DOMContentLoaded', () => document.querySelector('main').insertAdjacentHTML('beforeend', '<p>made by script</p>'))`, 'text/javascript')
      if (path === '/app') return answer(APP, 'text/html')
      if (path === '/app.js') return answer(`document.getElementById('root').innerHTML = '<h1>Fleet list</h1><p>Written by the bundle.</p>'`, 'text/javascript')
      return new Response('no', { status: 404 })
    },
  })
  origin = `http://127.0.0.1:${site.port}`
  const dir = tempDir()
  starts = join(dir, 'chromium-starts')
  const chromium = process.env.TRAWL_CHROMIUM ?? Bun.which('chromium')
  if (!chromium) throw new Error('these tests need Chromium: install it or set TRAWL_CHROMIUM')
  const wrapper = join(dir, 'chromium')
  writeFileSync(wrapper, `#!/bin/sh\necho started >> '${starts}'\nexec '${chromium}' "$@"\n`)
  chmodSync(wrapper, 0o755)
  // No TRAWL_SCRAPE_RENDER: auto is the default.
  env = { TRAWL_CHROMIUM: wrapper }
}, 180_000)
afterAll(async () => {
  await cleanup()
  site.stop(true)
})

const chromiumStarts = () => (existsSync(starts) ? readFileSync(starts, 'utf8').split('\n').filter(Boolean).length : 0)

describe('trawl scrape --render', () => {
  test('auto (the default) scrapes a static page without Chromium, as never does', async () => {
    const auto = await runBinary(['scrape', `${origin}/static`], env)
    const never = await runBinary(['scrape', `${origin}/static`, '--render', 'never'], env)
    expect([auto.code, auto.stderr]).toEqual([0, ''])
    expect(auto.stdout).toBe(never.stdout)
    expect(auto.stdout).toStartWith('# Night shift at the quay\n\nThe harbour board met')
    expect(auto.stdout).not.toContain('made by script')
    expect(chromiumStarts()).toBe(0)
  })

  test('auto renders a page a script builds; never does not; always renders a static page too', async () => {
    const app = await runBinary(['scrape', `${origin}/app`, '--render', 'auto'], env)
    expect([app.code, app.stdout]).toEqual([0, '# Fleet list\n\nWritten by the bundle.\n'])
    expect(chromiumStarts()).toBe(1)
    const shell = await runBinary(['scrape', `${origin}/app`, '--render', 'never'], env)
    expect(shell.code).toBe(0)
    expect(shell.stdout).not.toContain('Fleet list')
    expect(chromiumStarts()).toBe(1)
    const always = await runBinary(['scrape', `${origin}/static`, '--render', 'always'], { ...env, TRAWL_SCRAPE_RENDER: 'never' })
    expect(always.code).toBe(0)
    expect(always.stdout).toContain('made by script')
    expect(chromiumStarts()).toBe(2)
  }, 60_000)

  test('--main-content false keeps the navigation and footer; the default drops them', async () => {
    const main = await runBinary(['scrape', `${origin}/static`, '--render', 'never'], env)
    const whole = await runBinary(['scrape', `${origin}/static`, '--render', 'never', '--main-content', 'false'], env)
    const explicit = await runBinary(['scrape', `${origin}/static`, '--render', 'never', '--main-content=true'], env)
    expect(explicit.stdout).toBe(main.stdout)
    expect(main.stdout).not.toContain('[Weather]')
    expect(main.stdout).not.toContain('About the Ledger')
    expect(whole.code).toBe(0)
    expect(whole.stdout).toContain(`[Weather](${origin}/weather/)`)
    expect(whole.stdout).toContain(`[About the Ledger](${origin}/about)`)
    expect(whole.stdout).toContain('# Night shift at the quay')
  })

  test('bad values exit 2 with one line, and nothing is fetched', async () => {
    const cases: [string[], string][] = [
      [['--render', 'sometimes'], 'trawl: --render: must be one of auto, never, always, got "sometimes"\n'],
      [['--main-content', 'maybe'], 'trawl: --main-content: must be true or false, got "maybe"\n'],
      [['--main-content', 'false', '--format', 'html'], 'trawl: --main-content goes with --format markdown\n'],
    ]
    for (const [args, stderr] of cases) {
      const r = await runBinary(['scrape', `${origin}/static`, ...args], env)
      expect([args, r.code, r.stdout, r.stderr]).toEqual([args, 2, '', stderr])
    }
  })
})

describe('the scrape API in the binary, TRAWL_SCRAPE_RENDER=auto', () => {
  test('a static page is answered without Chromium; a script-built one is rendered', async () => {
    const before = chromiumStarts()
    const trawl = await startTrawl({ env: { ...env, TRAWL_ALLOW_PRIVATE_NETWORKS: 'true', TRAWL_SCRAPE_RATE: 'off' } })
    try {
      const r = await trawl.scrape.post('/v1/scrape', { url: `${origin}/static` }, { tenant: null })
      expect(r.status).toBe(200)
      expect(r.body.rendered).toBe(false)
      expect(r.body.metadata.title).toBe('Quay news')
      expect(r.body.links.map((l: { url: string }) => l.url)).toEqual([`${origin}/`, `${origin}/weather/`, `${origin}/about`])
      expect(r.body.results[0].content).toStartWith('# Night shift at the quay')
      expect(chromiumStarts()).toBe(before)
      const get = await fetch(`${trawl.scrapeUrl}/v1/scrape/${origin}/app`)
      expect(get.headers.get('x-scrape-rendered')).toBe('true')
      expect(await get.text()).toBe('# Fleet list\n\nWritten by the bundle.')
      expect(chromiumStarts()).toBe(before + 1)
    } finally {
      await trawl.stop()
    }
  }, 60_000)
})
