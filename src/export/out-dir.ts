import { mkdir, open, writeFile } from 'node:fs/promises'
import { dirname, join, resolve, sep } from 'node:path'
import type { PageRecord } from './pages'

/** A file or directory name stays well under the 255 bytes file systems allow. */
const MAX_NAME_BYTES = 120
const QUERY_CHARS = 60

const shortHash = (s: string) => new Bun.CryptoHasher('sha256').update(s).digest('hex').slice(0, 8)
const utf8Length = (s: string) => Buffer.byteLength(s)

/** Characters no file system takes in a name, control characters and path separators among them. */
// eslint-disable-next-line no-control-regex
const UNSAFE = /[\u0000-\u001f\u007f/\\:*?"<>|]/g

/** One path segment as a safe name: never empty, `.` or `..`, never too long. */
function safeName(raw: string): string {
  let name: string
  try {
    name = decodeURIComponent(raw)
  } catch {
    name = raw
  }
  name = name.replace(UNSAFE, '_')
  if (name === '' || name === '.' || name === '..') name = '_'.repeat(Math.max(1, name.length))
  if (utf8Length(name) > MAX_NAME_BYTES) name = `${[...name].slice(0, MAX_NAME_BYTES / 4).join('')}-${shortHash(name)}`
  return name
}

/** A directory name: never ending in `.md`, so no directory has the name of a page's file. */
const dirName = (raw: string) => {
  const name = safeName(raw)
  return /\.md$/i.test(name) ? `${name}_` : name
}

/**
 * Where a page goes under the export directory, `/`-separated and relative: `<host>/<path>`,
 * `index.md` for a directory-like path (`/`, `/docs/`), `.html` and `.htm` become `.md`, any
 * other name gets `.md` added, and a query becomes a suffix of safe characters (with a hash of
 * it when it had to be cut or changed). A port joins the host with `_`. Never absolute, never
 * with a `..` segment.
 */
export function pagePath(url: string): string {
  const u = new URL(url)
  const host = dirName(u.port ? `${u.hostname}_${u.port}` : u.hostname)
  const segments = u.pathname.split('/').slice(1)
  const last = segments.pop() ?? ''
  const dirs = segments.map(dirName)
  let stem: string
  if (last === '') stem = 'index'
  else {
    const name = safeName(last)
    stem = /\.html?$/i.test(name) ? name.replace(/\.html?$/i, '') || '_' : name
  }
  if (u.search.length > 1) {
    const query = u.search.slice(1)
    const slug = query.replace(/[^A-Za-z0-9._=&-]/g, '_').replaceAll('&', '_')
    const cut = slug.slice(0, QUERY_CHARS)
    stem += `__${cut}${cut !== query ? `-${shortHash(query)}` : ''}`
  }
  return [host, ...dirs, `${stem}.md`].join('/')
}

/** `a/b.md` taken already: `a/b-2.md`, `a/b-3.md`, … the first one free. */
function unique(path: string, taken: Set<string>): string {
  if (!taken.has(path)) return path
  const stem = path.slice(0, -'.md'.length)
  for (let n = 2; ; n++) {
    const next = `${stem}-${n}.md`
    if (!taken.has(next)) return next
  }
}

const escapeLinkText = (s: string) =>
  s
    .replace(/[[\]\\]/g, '\\$&')
    .replace(/\s+/g, ' ')
    .trim()

/**
 * Writes one `.md` per page with markdown, at pagePath (a later page whose path is taken gets
 * `-2`, `-3`… before `.md`), each starting with front matter (url, title); and `index.md` at the
 * root listing every page in order: title, URL and file, or why it has none. Pages are written
 * as they come, so memory holds the paths written, not the pages. Never writes outside `dir`.
 */
export async function writeOutDir(pages: AsyncIterable<PageRecord>, dir: string): Promise<{ pages: number; files: string[] }> {
  const root = resolve(dir)
  await mkdir(root, { recursive: true })
  const taken = new Set<string>(['index.md'])
  const made = new Set<string>()
  const files: string[] = []
  const index = await open(join(root, 'index.md'), 'w')
  let count = 0
  try {
    await index.write('# Pages\n\n')
    for await (const page of pages) {
      count++
      if (page.markdown === null) {
        const why = page.error
          ? `${page.error.reason}${page.error.detail ? `: ${page.error.detail}` : ''}`
          : page.status === null
            ? 'not fetched'
            : `no markdown (${page.content_type ?? 'no content type'})`
        await index.write(`- ${escapeLinkText(page.title ?? page.url)}: ${page.url} (${escapeLinkText(why)})\n`)
        continue
      }
      const rel = unique(pagePath(page.url), taken)
      taken.add(rel)
      const file = resolve(root, rel)
      if (!file.startsWith(root + sep)) throw new Error(`export: ${page.url} would be written outside ${root}`)
      const parent = dirname(file)
      if (!made.has(parent)) {
        await mkdir(parent, { recursive: true })
        made.add(parent)
      }
      const title = (page.title ?? '').replace(/\s+/g, ' ').trim()
      // YAML front matter, values as JSON strings (which YAML reads as they are).
      const front = [`url: ${JSON.stringify(page.url)}`, ...(title ? [`title: ${JSON.stringify(title)}`] : [])]
      const status = page.status !== null && page.status >= 400 ? [`status: ${page.status}`] : []
      await writeFile(file, `---\n${[...front, ...status].join('\n')}\n---\n\n${page.markdown}${page.markdown.endsWith('\n') ? '' : '\n'}`)
      files.push(rel)
      // A page that answered an error still has a body worth keeping, marked so it is not taken for content.
      await index.write(`- [${escapeLinkText(title || page.url)}](${encodeURI(rel)}): ${page.url}${page.error ? ` (${escapeLinkText(page.error.reason)})` : ''}\n`)
    }
  } finally {
    await index.close()
  }
  return { pages: count, files }
}
