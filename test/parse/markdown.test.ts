import { describe, expect, test } from 'bun:test'
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import type { DomNode } from '../../src/parse/dom'
import { mainContent } from '../../src/parse/main-content'
import { toMarkdown, type MarkdownOptions } from '../../src/parse/markdown'
import { boundNesting } from '../../src/parse/nesting'

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
    expect(
      readdirSync(DIR)
        .filter((f) => f.endsWith('.md'))
        .sort(),
    ).toEqual(expected)
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
    const html = '<p>a</p><script>var s = 1</script><style>p{}</style><template><p>t</p></template>' + '<iframe src="/f"></iframe><svg><text>icon</text></svg><noscript>enable js</noscript><p>b</p>'
    expect(toMarkdown(html, DEFAULT_BASE)).toBe('a\n\nb')
  })

  test('a code block inside a blockquote inside a list item keeps every prefix', () => {
    const html = '<ul><li>item<blockquote><pre><code class="language-sh">a\n\nb</code></pre></blockquote></li></ul>'
    expect(toMarkdown(html, DEFAULT_BASE)).toBe('- item\n\n  > ```sh\n  > a\n  >\n  > b\n  > ```')
  })

  test('text that reads as HTML is escaped so a renderer shows it as text', () => {
    expect(toMarkdown('<p>Use &lt;div&gt; or a &lt;!-- comment --&gt;, but 1 &lt; 2 stays.</p>', DEFAULT_BASE)).toBe('Use \\<div> or a \\<!-- comment -->, but 1 < 2 stays.')
  })

  test('emphasis nested in the same emphasis, or around paragraphs, adds no delimiters', () => {
    expect(toMarkdown('<b>a <strong>b</strong></b> <i>c <em>d</em></i> <del><s>e</s></del>', DEFAULT_BASE)).toBe('**a b** *c d* ~~e~~')
    expect(toMarkdown('<strong><p>one</p><p>two</p></strong>', DEFAULT_BASE)).toBe('one\n\ntwo')
  })

  test('superscripts and subscripts stay inline tags: GFM has no syntax for them, and reads ~x~ as strikethrough', () => {
    expect(toMarkdown('<p>2<sup>31</sup>, H<sub>2</sub>O</p>', DEFAULT_BASE)).toBe('2<sup>31</sup>, H<sub>2</sub>O')
    expect(toMarkdown('<p><b>x<sup><i>n</i></sup></b> <code>2<sup>k</sup></code></p>', DEFAULT_BASE)).toBe('**x<sup>*n*</sup>** `2^k`')
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

  test('skip_tags removes the element main_content would choose as the root: the rest of the body is the root', () => {
    const html = '<body><nav>menu</nav><main><h1>Title</h1><p>Body text of the main element is long enough.</p></main><p>outside</p></body>'
    expect(toMarkdown(html, DEFAULT_BASE, { skip_tags: ['main'], main_content: false })).toBe('menu\n\noutside')
    expect(toMarkdown(html, DEFAULT_BASE, { skip_tags: ['MAIN'], main_content: true })).toBe('outside')
    const article = '<body><article><p>Article body is here and long.</p></article><p>x</p></body>'
    expect(toMarkdown(article, DEFAULT_BASE, { skip_tags: ['article'], main_content: true })).toBe('x')
    // Nor does a <main> inside a removed element count, or an <h1> from one move to the root.
    const inside = '<section><h1>Gone</h1><main><p>Inner main prose, long enough.</p></main></section><main><p>Kept prose.</p></main>'
    expect(toMarkdown(inside, DEFAULT_BASE, { skip_tags: ['section'], main_content: true })).toBe('Kept prose.')
    expect(toMarkdown('<noscript><main><p>Enable JavaScript.</p></main></noscript><p>page</p>', DEFAULT_BASE, { main_content: true })).toBe('page')
    expect(toMarkdown('<p>all</p>', DEFAULT_BASE, { skip_tags: ['body'] })).toBe('')
  })
})

// The large inputs here are sized so that the quadratic code they once hit took seconds (or, for
// the table, ran out of memory); the assertions are on the output only, never on time.
describe('hostile input', () => {
  const nbsp = '\u00a0'

  test('a table wider than 64 columns is written as a layout table', () => {
    expect(toMarkdown(`<table><tr>${'<td colspan=50>a'.repeat(2)}<tr><td>x</table>`, DEFAULT_BASE)).toBe('a\n\na\n\nx')
    // 1000 cells spanning 50 columns over 3000 one-cell rows: 42 KB once made 430 MB of padding.
    const md = toMarkdown(`<table><tr>${'<td colspan=50>a'.repeat(1000)}${'<tr><td>x'.repeat(3000)}</table>`, DEFAULT_BASE)
    expect(md).toBe(`${'a\n\n'.repeat(1000)}${'x\n\n'.repeat(2999)}x`)
  })

  test('a table whose padding would outweigh its cells is written as a layout table', () => {
    const md = toMarkdown(`<table><tr>${'<th>h'.repeat(60)}${'<tr><td>x'.repeat(1000)}</table>`, DEFAULT_BASE)
    expect(md).toBe(`${'h\n\n'.repeat(60)}${'x\n\n'.repeat(999)}x`)
    // Short rows of a table within the budget are still padded.
    expect(toMarkdown(`<table><tr>${'<th>h'.repeat(3)}${'<tr><td>x'.repeat(3)}</table>`, DEFAULT_BASE)).toBe(`| h | h | h |\n| --- | --- | --- |${'\n| x |  |  |'.repeat(3)}`)
  })

  test('long runs of spaces in code keep their content; trailing ones go', () => {
    const spaces = ' '.repeat(100_000)
    expect(toMarkdown(`<pre>a${spaces}b</pre>`, DEFAULT_BASE)).toBe(`\`\`\`\na${spaces}b\n\`\`\``)
    expect(toMarkdown(`<pre>a${spaces}\nb${spaces}</pre>`, DEFAULT_BASE)).toBe('```\na\nb\n```')
  })

  test('runs of more than 256 no-break or other Unicode spaces outside code are cut to 256', () => {
    const long = nbsp.repeat(100_000)
    expect(toMarkdown(`<p>a${long}b</p>`, DEFAULT_BASE)).toBe(`a${' '.repeat(256)}b`)
    expect(toMarkdown(`<h2>a${long}b</h2>`, DEFAULT_BASE)).toBe(`## a${' '.repeat(256)}b`)
    expect(toMarkdown(`<div><p>x</p>a${long}b</div>`, DEFAULT_BASE)).toBe(`x\n\na${' '.repeat(256)}b`)
    expect(toMarkdown(`<ul><li>a${long}b</li></ul>`, DEFAULT_BASE)).toBe(`- a${' '.repeat(256)}b`)
    expect(toMarkdown(`<p>a${'\u3000'.repeat(100_000)}b</p>`, DEFAULT_BASE)).toBe(`a${'\u3000'.repeat(256)}b`)
    expect(toMarkdown(`<p>a${long}</p><p>b</p>`, DEFAULT_BASE)).toBe('a\n\nb')
    // Shorter runs are left alone.
    expect(toMarkdown(`<p>a${nbsp.repeat(256)}b</p>`, DEFAULT_BASE)).toBe(`a${' '.repeat(256)}b`)
  })

  test('list items and blockquotes nested past 32 levels are not indented further', () => {
    const list = Array.from({ length: 34 }, (_, i) => `<ul><li>${i + 1}`).join('')
    const lines = Array.from({ length: 34 }, (_, i) => `${'  '.repeat(Math.min(i, 32))}- ${i + 1}`)
    expect(toMarkdown(list, DEFAULT_BASE)).toBe(lines.join('\n'))
    const quotes = Array.from({ length: 34 }, (_, i) => `<blockquote><p>${i + 1}</p>`).join('')
    const quoted = Array.from({ length: 34 }, (_, i) => `${'> '.repeat(Math.min(i + 1, 32))}${i + 1}`)
    const blank = (i: number) => '> '.repeat(Math.min(i + 1, 32)).trimEnd()
    expect(toMarkdown(quotes, DEFAULT_BASE)).toBe(quoted.map((l, i) => (i ? `${blank(i - 1)}\n${l}` : l)).join('\n'))
  })

  test('deep lists and quotes around much text stay within 32 levels of indentation', () => {
    for (const open of ['<ul><li>', '<blockquote><blockquote>']) {
      const md = toMarkdown(`${open.repeat(250)}${'x<br>'.repeat(20_000)}`, DEFAULT_BASE)
      const lines = md.split('\n')
      expect(lines.length).toBe(20_000)
      // The first line holds every list marker ("- - - … x"); the others only indentation.
      expect(Math.max(...lines.slice(1).map((l) => l.length))).toBeLessThanOrEqual(66)
    }
  })

  test('tens of thousands of nested elements parse, and content after them keeps its place', () => {
    expect(toMarkdown(`<body>${'<div>'.repeat(40_000)}deep`, DEFAULT_BASE)).toBe('deep')
    expect(toMarkdown(`<body>${'<div/>'.repeat(40_000)}deep`, DEFAULT_BASE)).toBe('deep')
    expect(toMarkdown(`${'<table><td>'.repeat(20_000)}cell`, DEFAULT_BASE)).toBe('cell')
    expect(toMarkdown(`<div>${'<div>'.repeat(600)}x${'</div>'.repeat(600)}<p>after</p></div>`, DEFAULT_BASE)).toBe('x\n\nafter')
  })
  test('main_content over hundreds of nested candidates measures each subtree once', () => {
    const lines = `${'x\\\n'.repeat(19_999)}x`
    for (const open of ['<main>', '<div class="sidebar">', '<article>']) {
      expect(toMarkdown(`${open.repeat(400)}${'x<br>'.repeat(20_000)}`, DEFAULT_BASE, { main_content: true })).toBe(lines)
    }
  })
})

describe('boundNesting', () => {
  test('a page that never nests past the cap comes back unchanged', () => {
    const domino = require('@mixmark-io/domino') as { createDocument(html: string): { body: DomNode } }
    const depth = (n: DomNode): number => {
      let max = 0
      for (let c = n.firstChild; c; c = c.nextSibling) if (c.nodeType === 1) max = Math.max(max, 1 + depth(c))
      return max
    }
    // The cap is one more than the parsed page's depth: the model must not count more than that.
    for (const f of fixtures) expect(boundNesting(f.html, depth(domino.createDocument(f.html).body) + 1)).toBe(f.html)
  })

  test('implied end tags, raw text, comments and self-closing foreign elements do not count as nesting', () => {
    const html =
      `<ul>${'<li>x<p>y'.repeat(500)}</ul>${'<p>a'.repeat(500)}<table>${'<tr><td>1<td>2'.repeat(500)}</table>` +
      `<select>${'<option>o'.repeat(500)}</select><dl>${'<dt>t<dd>d'.repeat(500)}</dl>${'<a href=x>l'.repeat(500)}` +
      `${'<h2>h'.repeat(500)}<script>${'<div>'.repeat(500)}</script><!--${'<div>'.repeat(500)}-->` +
      `<textarea>${'<div>'.repeat(500)}</textarea><svg>${'<path d="M0 0"/>'.repeat(500)}</svg>` +
      `<div title="a>b">${'<span>s</span>'.repeat(500)}</div>${'<div>'.repeat(14)}${'</div>'.repeat(14)}`
    expect(boundNesting(html, 16)).toBe(html)
  })

  test('start tags past the cap are removed with their end tags', () => {
    const html = `${'<div>'.repeat(5)}x${'</div>'.repeat(5)}<p>y</p>`
    expect(boundNesting(html, 3)).toBe(`${'<div>'.repeat(3)}x${'</div>'.repeat(3)}<p>y</p>`)
    // <div/> is a start tag in HTML; a cell implies a row and a table body: four levels.
    expect(boundNesting(`${'<div/>'.repeat(5)}x`, 3)).toBe('<div/><div/><div/>x')
    expect(boundNesting(`${'<table><td>'.repeat(3)}x`, 8)).toBe('<table><td><table><td>x')
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
      `<main><div class="with-sidebar" id="wrap"><article class="post-sidebar-layout">${prose(40)}</article>` + `<div class="sidebar" id="side">${prose(5)}</div></div></main>`,
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
    const html = `<header>Site</header><div><article><header><h1>T</h1></header>${prose(10)}<footer>Tags</footer></article>` + `<article>${prose(1)}</article></div><footer>Copyright</footer>`
    expect(toMarkdown(html, DEFAULT_BASE, { main_content: true })).toBe(`# T\n\n${'word '.repeat(10).trim()}\n\nTags`)
  })

  test('language-* classes on code are not taken for a language picker', () => {
    const html = `<main>${prose(5)}<pre class="language-js"><code class="language-js">x()</code></pre></main>`
    expect(toMarkdown(html, DEFAULT_BASE, { main_content: true })).toBe(`${'word '.repeat(5).trim()}\n\n\`\`\`js\nx()\n\`\`\``)
  })
})
