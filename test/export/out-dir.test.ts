/** writeOutDir and pagePath: one markdown file per page, paths mirroring URLs, never outside the directory. */
import { afterAll, describe, expect, test } from 'bun:test'
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, relative } from 'node:path'
import { pagePath, writeOutDir, type PageRecord } from '../../src/export'

const dirs: string[] = []
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })))
const tempDir = () => {
  const d = mkdtempSync(join(tmpdir(), 'trawl-outdir-'))
  dirs.push(d)
  return d
}

const page = (url: string, over: Partial<PageRecord> = {}): PageRecord => ({
  url,
  final_url: url,
  status: 200,
  depth: 0,
  content_type: 'text/html',
  title: `Title of ${url}`,
  description: null,
  language: null,
  markdown: `# ${url}\n`,
  data: null,
  outlinks: 0,
  visited_at: '2026-11-27T00:00:00.000Z',
  artifact_ids: [],
  error: null,
  ...over,
})

async function* from<T>(items: T[]) {
  yield* items
}

/** Every file under dir, relative, sorted. */
function tree(dir: string): string[] {
  const out: string[] = []
  const walk = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name)
      if (e.isDirectory()) walk(p)
      else out.push(relative(dir, p))
    }
  }
  walk(dir)
  return out.sort()
}

describe('pagePath', () => {
  test.each([
    ['https://example.com/', 'example.com/index.md'],
    ['https://example.com/docs/', 'example.com/docs/index.md'],
    ['https://example.com/docs/intro.html', 'example.com/docs/intro.md'],
    ['https://example.com/docs/intro.HTM', 'example.com/docs/intro.md'],
    ['https://example.com/docs/intro', 'example.com/docs/intro.md'],
    ['https://example.com/api.php', 'example.com/api.php.md'],
    ['http://127.0.0.1:8080/a/b', '127.0.0.1_8080/a/b.md'],
    ['https://example.com/search?q=a+b&page=2', 'example.com/search__q=a_b_page=2-' + 'x'.repeat(8)],
    ['https://example.com/a%20b/c%2Fd', 'example.com/a b/c_d.md'],
    ['https://example.com/notes.md/x', 'example.com/notes.md_/x.md'],
    ['https://index.md/', 'index.md_/index.md'],
    ['https://example.com/a//b', 'example.com/a/_/b.md'],
    ['https://example.com/%2E%2E/x', 'example.com/x.md'], // URL parsing resolves it
    ['https://example.com/..%2Fx', 'example.com/.._x.md'],
  ])('%s → %s', (url, want) => {
    const got = pagePath(url)
    if (want.endsWith('x'.repeat(8))) expect(got).toMatch(/^example\.com\/search__q=a_b_page=2-[0-9a-f]{8}\.md$/)
    else expect(got).toBe(want)
  })

  test('a long name or query is cut, with a hash that keeps different ones apart', () => {
    const a = pagePath(`https://example.com/${'a'.repeat(300)}`)
    const b = pagePath(`https://example.com/${'a'.repeat(299)}b`)
    expect(a).not.toBe(b)
    for (const p of [a, b]) for (const seg of p.split('/')) expect(Buffer.byteLength(seg)).toBeLessThanOrEqual(128)
    const q1 = pagePath(`https://example.com/s?${'q'.repeat(100)}=1`)
    const q2 = pagePath(`https://example.com/s?${'q'.repeat(100)}=2`)
    expect(q1).not.toBe(q2)
  })

  test('never absolute, never a . or .. segment', () => {
    for (const url of ['https://example.com/../../etc/passwd', 'https://example.com/%2e%2e/%2e%2e/etc', 'https://example.com/..%2f..%2fetc', 'https://example.com/.%2e/x']) {
      const p = pagePath(url)
      expect(p.startsWith('/')).toBe(false)
      for (const seg of p.split('/')) expect(seg === '.' || seg === '..' || seg === '').toBe(false)
    }
  })
})

describe('writeOutDir', () => {
  test('one file per page with markdown, an index of every page, collisions kept apart', async () => {
    const dir = tempDir()
    const pages = [
      page('https://example.com/', { title: 'Home [main]' }),
      page('https://example.com/docs/intro.html'),
      page('https://example.com/docs/intro'), // same file as intro.html: gets -2
      page('https://example.com/docs/intro.htm'), // and -3
      page('https://example.com/gone', { status: null, markdown: null, title: null, error: { reason: 'connect', detail: 'refused' } }),
      page('https://example.com/img.png', { markdown: null, content_type: 'image/png', title: null }),
      page('https://other.example/?a=1'),
    ]
    const result = await writeOutDir(from(pages), dir)
    expect(result.pages).toBe(7)
    expect(result.files).toEqual(['example.com/index.md', 'example.com/docs/intro.md', 'example.com/docs/intro-2.md', 'example.com/docs/intro-3.md', 'other.example/index__a=1.md'])
    expect(tree(dir)).toEqual([...result.files, 'index.md'].sort())
    expect(readFileSync(join(dir, 'example.com/index.md'), 'utf8')).toBe('---\nurl: "https://example.com/"\ntitle: "Home [main]"\n---\n\n# https://example.com/\n')
    expect(readFileSync(join(dir, 'example.com/docs/intro-2.md'), 'utf8')).toContain('# https://example.com/docs/intro\n')
    expect(readFileSync(join(dir, 'index.md'), 'utf8')).toBe(
      [
        '# Pages',
        '',
        '- [Home \\[main\\]](example.com/index.md): https://example.com/',
        '- [Title of https://example.com/docs/intro.html](example.com/docs/intro.md): https://example.com/docs/intro.html',
        '- [Title of https://example.com/docs/intro](example.com/docs/intro-2.md): https://example.com/docs/intro',
        '- [Title of https://example.com/docs/intro.htm](example.com/docs/intro-3.md): https://example.com/docs/intro.htm',
        '- https://example.com/gone: https://example.com/gone (connect: refused)',
        '- https://example.com/img.png: https://example.com/img.png (no markdown (image/png))',
        '- [Title of https://other.example/?a=1](other.example/index__a=1.md): https://other.example/?a=1',
        '',
      ].join('\n'),
    )
  })

  test('hostile URLs stay inside the directory', async () => {
    const parent = tempDir()
    const dir = join(parent, 'out')
    const urls = [
      'https://example.com/../../../escaped',
      'https://example.com/%2E%2E/%2E%2E/escaped',
      'https://example.com/..%2F..%2Fescaped',
      'https://example.com/a%00b',
      'https://example.com/C:%5Cwin',
    ]
    const result = await writeOutDir(from(urls.map((u) => page(u))), dir)
    expect(result.files.length).toBe(urls.length)
    // Nothing beside `out` in its parent, and every file under it.
    expect(readdirSync(parent)).toEqual(['out'])
    for (const f of result.files) expect(statSync(join(dir, f)).isFile()).toBe(true)
    expect(existsSync(join(parent, 'escaped'))).toBe(false)
  })
})
