// The example site (examples/site) and the folder server that serves it (scripts/serve-folder.ts):
// the README's offline walk-through crawls this pair, so both must hold what it promises.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { connect } from 'node:net'
import { tmpdir } from 'node:os'
import { join, relative, resolve } from 'node:path'
import { type FolderServer, serveFolder } from '../../scripts/serve-folder'

const SITE = resolve(import.meta.dir, '../../examples/site')
const SCRIPT = resolve(import.meta.dir, '../../scripts/serve-folder.ts')
const BROKEN = '/guide/retired-chapter.html' // the one deliberate broken link

let site: FolderServer
let jail: FolderServer
let tmp: string

beforeAll(() => {
  site = serveFolder(SITE, 0)
  // A folder with a secret beside it (and a link out of it): nothing may reach the secret.
  tmp = mkdtempSync(join(tmpdir(), 'trawl-serve-folder-'))
  mkdirSync(join(tmp, 'public'))
  writeFileSync(join(tmp, 'public', 'hello.txt'), 'hello\n')
  writeFileSync(join(tmp, 'secret.txt'), 'SECRET-7d1f\n')
  symlinkSync(join(tmp, 'secret.txt'), join(tmp, 'public', 'link.txt'))
  jail = serveFolder(join(tmp, 'public'), 0)
})

afterAll(() => {
  site?.stop()
  jail?.stop()
  if (tmp) rmSync(tmp, { recursive: true, force: true })
})

/** Sends one request line as written (no client normalizes its path) and returns the raw answer. */
function rawGet(port: number, path: string): Promise<string> {
  return new Promise((done, fail) => {
    const socket = connect(port, '127.0.0.1', () => {
      socket.write(`GET ${path} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nConnection: close\r\n\r\n`)
    })
    let answer = ''
    socket.setEncoding('latin1')
    socket.on('data', (chunk) => (answer += chunk))
    socket.on('end', () => done(answer))
    socket.on('error', fail)
  })
}

function htmlFiles(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.html'))
    .map((f) => join(dir, f))
    .sort()
}

/** The URL path a file of the site is served at (`guide/index.html` → `/guide/`). */
function servedPath(file: string): string {
  return '/' + relative(SITE, file).replace(/(^|\/)index\.html$/, '$1')
}

describe('serve-folder', () => {
  test('serves index.html for / and a directory, with the file bytes and an HTML content type', async () => {
    for (const [path, file] of [
      ['/', 'index.html'],
      ['/index.html', 'index.html'],
      ['/guide/', 'guide/index.html'],
      ['/guide/frontier.html', 'guide/frontier.html'],
    ] as const) {
      const res = await fetch(site.origin + path)
      expect(res.status).toBe(200)
      expect(res.headers.get('content-type')).toBe('text/html;charset=utf-8')
      expect(await res.text()).toBe(readFileSync(join(SITE, file), 'utf8'))
    }
  })

  test('other files get their own content types', async () => {
    const types: Record<string, string> = {
      '/style.css': 'text/css',
      '/images/crawl-loop.svg': 'image/svg+xml',
      '/sitemap.xml': 'xml',
      '/robots.txt': 'text/plain',
    }
    for (const [path, type] of Object.entries(types)) {
      const res = await fetch(site.origin + path)
      expect(res.status).toBe(200)
      expect(res.headers.get('content-type')).toContain(type)
    }
    const css = await fetch(site.origin + '/style.css')
    expect(new Uint8Array(await css.arrayBuffer())).toEqual(new Uint8Array(readFileSync(join(SITE, 'style.css'))))
  })

  test('a directory named without its slash is redirected to it', async () => {
    const res = await fetch(site.origin + '/guide?x=1', { redirect: 'manual' })
    expect(res.status).toBe(301)
    expect(res.headers.get('location')).toBe('/guide/?x=1')
  })

  test('a missing file is a 404, with the folder 404.html when it has one', async () => {
    const res = await fetch(site.origin + '/no/such/page.html')
    expect(res.status).toBe(404)
    expect(await res.text()).toBe(readFileSync(join(SITE, '404.html'), 'utf8'))
    const plain = await fetch(jail.origin + '/missing.txt')
    expect(plain.status).toBe(404)
    expect(await plain.text()).toBe('not found\n')
  })

  test('only GET and HEAD', async () => {
    const res = await fetch(site.origin + '/', { method: 'POST', body: 'x' })
    expect(res.status).toBe(405)
    expect(res.headers.get('allow')).toBe('GET, HEAD')
    const head = await fetch(site.origin + '/index.html', { method: 'HEAD' })
    expect(head.status).toBe(200)
    expect(await head.text()).toBe('')
  })

  test('nothing outside the folder is served: .. in any spelling, and links out of it', async () => {
    expect(await (await fetch(jail.origin + '/hello.txt')).text()).toBe('hello\n')
    for (const path of [
      '/../secret.txt',
      '/public/../../secret.txt',
      '/%2e%2e/secret.txt',
      '/..%2fsecret.txt',
      '/..%2Fsecret.txt',
      '/..%5csecret.txt',
      '/.%2e/secret.txt',
      '/hello.txt%00',
      '/link.txt',
    ]) {
      const answer = await rawGet(jail.port, path)
      expect(answer).not.toContain('SECRET-7d1f')
      expect(answer).toMatch(/^HTTP\/1\.1 (400|404) /)
    }
    expect(await rawGet(jail.port, '/..%2fsecret.txt')).toMatch(/^HTTP\/1\.1 400 /)
  })

  test('robots.txt and the sitemap name the origin they are served from', async () => {
    const robots = await (await fetch(site.origin + '/robots.txt')).text()
    expect(robots).toContain(`Sitemap: ${site.origin}/sitemap.xml`)
    expect(readFileSync(join(SITE, 'robots.txt'), 'utf8')).toContain('Sitemap: http://127.0.0.1:8000/sitemap.xml')
    const sitemap = await (await fetch(site.origin + '/sitemap.xml')).text()
    expect(sitemap).not.toContain('127.0.0.1:8000')
    expect(sitemap).toContain(`<loc>${site.origin}/guide/</loc>`)
  })

  test('the command line: DIR --port N, and a clear error for a bad port', async () => {
    const proc = Bun.spawn([process.execPath, SCRIPT, SITE, '--port', '0'], { stdout: 'pipe', stderr: 'pipe' })
    try {
      const reader = proc.stdout.getReader()
      let out = ''
      while (!out.includes('\n')) {
        const { value, done } = await reader.read()
        if (done) break
        out += new TextDecoder().decode(value)
      }
      const origin = out.match(/at (http:\/\/127\.0\.0\.1:\d+)\//)?.[1]
      expect(origin).toBeDefined()
      const res = await fetch(origin + '/glossary.html')
      expect(await res.text()).toBe(readFileSync(join(SITE, 'glossary.html'), 'utf8'))
    } finally {
      proc.kill()
      await proc.exited
    }
    const bad = Bun.spawnSync([process.execPath, SCRIPT, SITE, '--port', 'eighty'])
    expect(bad.exitCode).toBe(2)
    expect(bad.stderr.toString()).toContain('--port: eighty is not a port number')
  })
})

describe('the example site', () => {
  const pages = htmlFiles(SITE)

  test('has 8 to 12 pages of content, each with the chrome of a real site around its article', () => {
    const content = pages.filter((f) => !f.endsWith('/404.html') && !f.includes('/drafts/'))
    expect(content.length).toBeGreaterThanOrEqual(8)
    expect(content.length).toBeLessThanOrEqual(12)
    for (const file of pages) {
      const html = readFileSync(file, 'utf8')
      for (const part of ['<header class="site-header">', '<nav', '<aside class="sidebar">', '<footer', '<main>', '<article>', '<h1>', '<title>', 'name="description"', '<html lang="en">']) {
        expect({ file, has: html.includes(part) }).toEqual({ file, has: true })
      }
    }
    const home = readFileSync(join(SITE, 'index.html'), 'utf8')
    expect(home).toContain('class="cookie-banner"')
    const all = pages.map((f) => readFileSync(f, 'utf8')).join('\n')
    for (const kind of ['<pre><code', '<table>', '<ul>', '<ol>', '<h2>', '<img ']) expect(all).toContain(kind)
  })

  test('every internal link resolves, except the one deliberate broken link', async () => {
    const checked = new Map<string, number>()
    for (const file of pages) {
      const base = site.origin + servedPath(file)
      const html = readFileSync(file, 'utf8')
      for (const [, , ref] of html.matchAll(/\s(href|src)="([^"]*)"/g)) {
        const url = new URL(ref!.replaceAll('&amp;', '&'), base)
        if (url.origin !== site.origin) continue
        url.hash = ''
        if (!checked.has(url.href)) checked.set(url.href, (await fetch(url, { redirect: 'manual' })).status)
      }
    }
    const broken = [...checked].filter(([, status]) => status !== 200).map(([url, status]) => `${url.slice(site.origin.length)} ${status}`)
    expect(broken).toEqual([`${BROKEN} 404`])
    // Every page of the site is linked from somewhere, and so is robots.txt's disallowed folder.
    for (const file of pages.filter((f) => !f.endsWith('/404.html'))) {
      expect(checked.has(site.origin + servedPath(file))).toBe(true)
    }
    expect(checked.get(site.origin + '/drafts/next-chapter.html')).toBe(200)
  })

  test('the sitemap lists every public page, and robots.txt keeps crawlers out of the drafts', async () => {
    const sitemap = await (await fetch(site.origin + '/sitemap.xml')).text()
    const locs = [...sitemap.matchAll(/<loc>([^<]+)<\/loc>/g)].map((m) => m[1]!.slice(site.origin.length))
    const publicPages = pages.filter((f) => !f.endsWith('/404.html') && !f.includes('/drafts/')).map(servedPath)
    expect(locs.sort()).toEqual(publicPages.sort())
    for (const loc of locs) expect((await fetch(site.origin + loc)).status).toBe(200)
    const robots = readFileSync(join(SITE, 'robots.txt'), 'utf8')
    expect(robots).toMatch(/^User-agent: \*\nDisallow: \/drafts\/$/m)
  })
})
