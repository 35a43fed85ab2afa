import { describe, expect, test } from 'bun:test'
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { mainContent, type DomNode } from '../../src/parse/main-content'
import { toMarkdown, type MarkdownOptions } from '../../src/parse/markdown'

// Every test/fixtures/markdown/NAME.html is converted with each case of NAME.json (default: the
// one case NAME.md with no options, against DEFAULT_BASE) and must equal the .md file exactly.
const DIR = join(import.meta.dir, '..', 'fixtures', 'markdown')
const DEFAULT_BASE = 'https://example.com/docs/guide/page.html'
type Fixture = { base?: string; cases?: Record<string, MarkdownOptions> }

const fixtures = readdirSync(DIR)
  .filter((f) => f.endsWith('.html'))
  .sort()
  .map((file) => {
    const name = file.slice(0, -'.html'.length)
    const configPath = join(DIR, `${name}.json`)
    const config: Fixture = existsSync(configPath) ? JSON.parse(readFileSync(configPath, 'utf8')) : {}
    return { name, html: readFileSync(join(DIR, file), 'utf8'), base: config.base ?? DEFAULT_BASE, cases: config.cases ?? { [`${name}.md`]: {} } }
  })

describe('fixtures', () => {
  for (const f of fixtures) {
    for (const [expected, opts] of Object.entries(f.cases)) {
      test(`${f.name}.html ${JSON.stringify(opts)} → ${expected}`, () => {
        expect(`${toMarkdown(f.html, f.base, opts)}\n`).toBe(readFileSync(join(DIR, expected), 'utf8'))
      })
    }
  }

  test('there are at least ten, and every .md file is some case’s expectation', () => {
    expect(fixtures.length).toBeGreaterThanOrEqual(10)
    const expected = fixtures.flatMap((f) => Object.keys(f.cases)).sort()
    expect(readdirSync(DIR).filter((f) => f.endsWith('.md')).sort()).toEqual(expected)
  })

  test('output is trimmed, has no trailing spaces and no runs of blank lines', () => {
    for (const f of fixtures) {
      for (const opts of Object.values(f.cases)) {
        const md = toMarkdown(f.html, f.base, opts)
        expect(md).toBe(md.trim())
        expect(md).not.toMatch(/[ \t]$/m)
        expect(md).not.toContain('\n\n\n')
      }
    }
  })
})

describe('toMarkdown', () => {
  test('empty and whitespace-only documents give empty markdown', () => {
    expect(toMarkdown('', DEFAULT_BASE)).toBe('')
    expect(toMarkdown('<html><body> \n <p>&nbsp;</p></body></html>', DEFAULT_BASE)).toBe('')
  })

  test('the base of one call does not leak into the next', () => {
    const html = '<a href="x">x</a>'
    expect(toMarkdown(html, 'https://a.example/dir/')).toBe('[x](https://a.example/dir/x)')
    expect(toMarkdown(html, 'https://b.example/')).toBe('[x](https://b.example/x)')
  })

  test('an unusable base URL keeps absolute links and turns relative ones into text', () => {
    expect(toMarkdown('<a href="https://a.example/">abs</a> <a href="/rel">rel</a>', 'not a url')).toBe('[abs](https://a.example/) rel')
  })

  test('a <base href> that does not parse is ignored', () => {
    expect(toMarkdown('<head><base href="http://[broken"></head><a href="x">x</a>', 'https://a.example/d/')).toBe('[x](https://a.example/d/x)')
  })

  test('the first <base href> anywhere is the base, as in a browser and in the scan; a non-http one is ignored', () => {
    expect(toMarkdown('<a href="x">x</a><base href="/b/"><base href="/c/">', 'https://a.example/d/')).toBe('[x](https://a.example/b/x)')
    expect(toMarkdown('<head><base href="javascript:void(0)/"></head><a href="x">x</a>', 'https://a.example/d/')).toBe('[x](https://a.example/d/x)')
  })

  test('a frameset document without a body still converts', () => {
    expect(toMarkdown('<html><frameset><frame src="a.html"></frameset><noframes>No frames</noframes></html>', DEFAULT_BASE)).toBe('No frames')
  })

  test('scripts, styles, templates, iframes and svg never reach the output', () => {
    const html =
      '<p>a</p><script>var s = 1</script><style>p{}</style><template><p>t</p></template>' +
      '<iframe src="/f"></iframe><svg><text>icon</text></svg><noscript>enable js</noscript><p>b</p>'
    expect(toMarkdown(html, DEFAULT_BASE)).toBe('a\n\nb')
  })

  test('a code block inside a blockquote inside a list item keeps every prefix', () => {
    const html = '<ul><li>item<blockquote><pre><code class="language-sh">a\n\nb</code></pre></blockquote></li></ul>'
    expect(toMarkdown(html, DEFAULT_BASE)).toBe('- item\n\n  > ```sh\n  > a\n  >\n  > b\n  > ```')
  })

  test('text that reads as HTML is escaped so a renderer shows it as text', () => {
    expect(toMarkdown('<p>Use &lt;div&gt; or a &lt;!-- comment --&gt;, but 1 &lt; 2 stays.</p>', DEFAULT_BASE)).toBe(
      'Use \\<div> or a \\<!-- comment -->, but 1 < 2 stays.',
    )
  })

  test('emphasis nested in the same emphasis, or around paragraphs, adds no delimiters', () => {
    expect(toMarkdown('<b>a <strong>b</strong></b> <i>c <em>d</em></i> <del><s>e</s></del>', DEFAULT_BASE)).toBe('**a b** *c d* ~~e~~')
    expect(toMarkdown('<strong><p>one</p><p>two</p></strong>', DEFAULT_BASE)).toBe('one\n\ntwo')
  })

  test('a hard break inside a link stays a hard break in the link text', () => {
    expect(toMarkdown('<p><a href="/a">one<br>two</a></p>', DEFAULT_BASE)).toBe('[one\\\ntwo](https://example.com/a)')
  })

  test('thousands of unclosed tags do not overflow the stack: past 512 levels content is text', () => {
    const deep = `<p>top</p>${'<span>'.repeat(20000)}bottom`
    expect(toMarkdown(deep, DEFAULT_BASE)).toBe('top\n\nbottom')
  })

  test('skip_tags removes the element with its content, main content or not', () => {
    const html = '<main><article><p>keep</p><p class="x">drop <b>all</b></p></article></main>'
    expect(toMarkdown(html, DEFAULT_BASE, { skip_tags: ['article'], main_content: true })).toBe('')
    expect(toMarkdown(html, DEFAULT_BASE, { skip_tags: ['b'] })).toBe('keep\n\ndrop')
  })
})

describe('mainContent', () => {
  const domino = require('@mixmark-io/domino') as { createDocument(html: string): { body: DomNode } }
  const pick = (html: string) => {
    const { body } = domino.createDocument(html)
    return { body, ...mainContent(body) }
  }
  const prose = (words: number) => `<p>${'word '.repeat(words)}</p>`

  test('<main> wins over an <article> outside it; an empty <main> does not count', () => {
    expect(pick(`<article>${prose(50)}</article><main id="m">${prose(5)}</main>`).root.getAttribute('id')).toBe('m')
    expect(pick(`<main></main><article id="a">${prose(5)}</article>`).root.getAttribute('id')).toBe('a')
  })

  test('several articles of similar weight are a listing: the body is the root', () => {
    const { root, body } = pick(`<article>${prose(20)}</article><article>${prose(18)}</article>`)
    expect(root).toBe(body)
    const dominant = pick(`<article id="big">${prose(100)}</article><article>${prose(10)}</article>`)
    expect(dominant.root.getAttribute('id')).toBe('big')
  })

  test('an element named like chrome that holds the main article is never chrome', () => {
    const { body, isChrome } = pick(
      `<main><div class="with-sidebar" id="wrap"><article class="post-sidebar-layout">${prose(40)}</article>` +
        `<div class="sidebar" id="side">${prose(5)}</div></div></main>`,
    )
    const byId = (id: string) => (body as DomNode & { ownerDocument: { getElementById(id: string): DomNode } }).ownerDocument.getElementById(id)
    expect(isChrome(byId('wrap'))).toBe(false)
    expect(isChrome(byId('side'))).toBe(true)
  })

  test('a class match holding most of the prose is content, whatever it is called', () => {
    const md = toMarkdown(`<div class="related-posts">${prose(60)}</div><div class="share">${prose(3)}</div>`, DEFAULT_BASE, {
      main_content: true,
    })
    expect(md).toBe('word '.repeat(60).trim())
  })

  test('headers and footers inside the article stay; page-level ones go', () => {
    const html =
      `<header>Site</header><div><article><header><h1>T</h1></header>${prose(10)}<footer>Tags</footer></article>` +
      `<article>${prose(1)}</article></div><footer>Copyright</footer>`
    expect(toMarkdown(html, DEFAULT_BASE, { main_content: true })).toBe(`# T\n\n${'word '.repeat(10).trim()}\n\nTags`)
  })

  test('language-* classes on code are not taken for a language picker', () => {
    const html = `<main>${prose(5)}<pre class="language-js"><code class="language-js">x()</code></pre></main>`
    expect(toMarkdown(html, DEFAULT_BASE, { main_content: true })).toBe(`${'word '.repeat(5).trim()}\n\n\`\`\`js\nx()\n\`\`\``)
  })
})
