// The article and the page builders that the main-content and edge-chrome tests share.
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { toMarkdown } from '../../src/parse/markdown'

// test/fixtures/main-content: article.html is an article alone and article.md its markdown.
// landmarks.html wraps it in chrome marked up with <header>, <nav>, <aside> and <footer>;
// div-layout.html in the same chrome made of plain <div>s whose class names name nothing, so
// only the structure can tell chrome from content. Both must give article.md exactly.
const FIXTURES = join(import.meta.dir, '..', 'fixtures')
export const read = (path: string) => readFileSync(join(FIXTURES, path), 'utf8')
const BASE = 'https://db.example/guides/wal.html'
export const ARTICLE = read('main-content/article.html')
export const ARTICLE_MD = read('main-content/article.md').trimEnd()
export const main = (html: string, base = BASE) => toMarkdown(html, base)
export const whole = (html: string, base = BASE) => toMarkdown(html, base, { main_content: false })

export const page = (...blocks: string[]) => `<!doctype html><html><head><title>t</title></head><body>${blocks.join('\n')}</body></html>`
export const links = (...names: string[]) => `<ul>${names.map((n) => `<li><a href="/${n.toLowerCase()}">${n}</a></li>`).join('')}</ul>`
export const COOKIES = '<p>We use cookies to understand how the guides are read. See our <a href="/privacy">privacy policy</a>.</p><button>Accept all</button> <button>Only necessary</button>'
