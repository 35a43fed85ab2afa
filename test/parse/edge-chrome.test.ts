import { describe, expect, test } from 'bun:test'
import { ARTICLE, ARTICLE_MD, COOKIES, links, main, page, read, whole } from './main-content-pages'

// Chrome found by structure at the edges of the content (src/parse/edge-chrome.ts), through the
// markdown step as pages meet it.
describe('main content on pages with chrome', () => {
  // Each kind of chrome on its own, where pages put it, around the article in a plain <div>.
  const pieces: Record<string, string[]> = {
    'div top bar of links': [`<div class="t"><a href="/"><img src="/logo.png" alt="DB Guides"></a>${links('Guides', 'Reference', 'Blog', 'Sign in')}</div>`, 'start'],
    'div breadcrumb list': ['<div class="t"><ol><li><a href="/">Home</a></li><li><a href="/guides">Guides</a></li><li>Write-ahead log</li></ol></div>', 'start'],
    'div table of Prev/Up/Next cells': [
      '<div class="t"><table><tr><th colspan="5">Tuning</th></tr><tr><td><a href="/a">Prev</a></td><td><a href="/g">Up</a></td><th>Guides</th><td><a href="/">Home</a></td><td><a href="/b">Next</a></td></tr></table><hr></div>',
      'start',
    ],
    'div bottom bar with a copyright line': [`<div class="t">${links('About', 'Contact')}<p>© 2024 DB Guides. All rights reserved.</p></div>`, 'end'],
    'div copyright line alone': ['<div class="t"><p>Copyright 2024 DB Guides. Text available under a license of its own, which reads at some length.</p></div>', 'end'],
    'div cookie banner at the top': [`<div class="t">${COOKIES}</div>`, 'start'],
    'div cookie banner at the bottom': [`<div class="t">${COOKIES}</div>`, 'end'],
  }
  for (const [name, [chrome, where]] of Object.entries(pieces)) {
    test(`${name} is removed, the article intact`, () => {
      const article = `<div class="a">${ARTICLE}</div>`
      const html = page(...(where === 'start' ? [chrome!, article] : [article, chrome!]))
      expect(whole(html)).not.toBe(ARTICLE_MD)
      expect(main(html)).toBe(ARTICLE_MD)
    })
  }

  test('a div sidebar of link lists beside the article, in a two-column wrapper, is removed', () => {
    const side = `<div class="c2"><h3>In this section</h3>${links('Vacuum', 'Indexes', 'Replication')}<h3>Recent</h3>${links('Pooling', 'Partitions')}</div>`
    for (const columns of [
      [`<div class="c1">${ARTICLE}</div>`, side],
      [side, `<div class="c1">${ARTICLE}</div>`],
    ]) {
      const html = page(`<div class="row">${columns.join('')}</div>`)
      expect(whole(html)).toContain('[Vacuum](')
      expect(main(html)).toBe(ARTICLE_MD)
    }
  })

  test('chrome before the title of a page without wrappers goes; its own text stays', () => {
    const html = page(`<div>${links('Guides', 'Blog')}</div>`, ARTICLE)
    expect(main(html)).toBe(ARTICLE_MD)
  })
})

describe('main content keeps what is content', () => {
  test('a table of contents after a chapter’s text stays, at the end of its content', () => {
    const html = page(
      '<div class="chapter"><h2>Chapter 5. Data Definition</h2><p>This chapter covers how one creates the database structures that will hold one’s data. In a relational database, the raw data is stored in tables.</p>' +
        `<div class="toc">${links('Basics', 'Defaults')}</div></div>`,
    )
    expect(main(html)).toBe(whole(html))
    expect(main(html)).toContain('- [Defaults](https://db.example/defaults)')
  })

  test('a page that is mostly a list of links keeps it', () => {
    const html = page(`<div><a href="/">Home</a></div><div><h1>Index</h1>${links('Alpha', 'Beta', 'Gamma', 'Delta', 'Epsilon', 'Zeta')}</div>`)
    expect(main(html)).toBe(`# Index\n\n${['Alpha', 'Beta', 'Gamma', 'Delta', 'Epsilon', 'Zeta'].map((n) => `- [${n}](https://db.example/${n.toLowerCase()})`).join('\n')}`)
  })

  test('a listing of cards keeps every card, the first and the last too', () => {
    const card = (n: number) =>
      `<div class="card"><h2><a href="/p/${n}">Post ${n}</a></h2><p>A summary of post ${n} that runs to a sentence or two, the way listings show them before the link.</p><a href="/p/${n}">Read more</a></div>`
    const html = page(`<div class="list">${[1, 2, 3, 4].map(card).join('')}</div>`)
    expect(main(html)).toBe(whole(html))
    expect(main(html)).toContain('## [Post 1](https://db.example/p/1)')
    expect(main(html)).toContain('## [Post 4](https://db.example/p/4)')
  })

  test('an image at the top, a code block with a copy button at the end, and an article’s tags stay', () => {
    const html = page(`<div><img src="/hero.jpg" alt="Hero"></div><div>${ARTICLE}</div><div class="code"><button>Copy</button><pre><code>SELECT 1;</code></pre></div>`)
    expect(main(html)).toBe(`![Hero](https://db.example/hero.jpg)\n\n${ARTICLE_MD}\n\nCopy\n\n\`\`\`\nSELECT 1;\n\`\`\``)
    const tagged = page(`<article>${ARTICLE}<div class="t"><a href="/tags/wal">WAL</a>, <a href="/tags/tuning">tuning</a></div></article>`)
    expect(main(tagged)).toBe(`${ARTICLE_MD}\n\n[WAL](https://db.example/tags/wal), [tuning](https://db.example/tags/tuning)`)
  })
})

// Three pages of the PostgreSQL 15 manual as Debian ships it (test/fixtures/pgdoc, with its
// copyright notice). Each has a navigation header and footer: tables of Prev/Up/Home/Next links
// and page titles, the same links above and below. With main content they go, and the result
// is exactly the page without them converted whole: no body text, heading, code or table lost.
describe('the PostgreSQL manual', () => {
  const withoutNavigation = (html: string) => html.replace(/<div class="navheader">[\s\S]*?<\/div>/, '').replace(/<div class="navfooter">[\s\S]*?<\/div>/, '')
  for (const name of ['index.html', 'ddl.html', 'sql-syntax-lexical.html']) {
    test(`${name}: the navigation header and footer go, everything else stays`, () => {
      const html = read(`pgdoc/${name}`)
      const base = `https://www.postgresql.org/docs/15/${name}`
      const md = main(html, base)
      expect(withoutNavigation(html)).not.toBe(html)
      expect(whole(html, base)).toMatch(/\[(Prev|Next)\]\(/)
      expect(md).not.toMatch(/\[(Prev|Up|Home|Next)\]\(/)
      expect(md).toBe(whole(withoutNavigation(html), base))
    })
  }

  test('sql-syntax-lexical.html keeps its headings, code blocks, tables and the section whose id ends in "comments"', () => {
    const md = main(read('pgdoc/sql-syntax-lexical.html'), 'https://www.postgresql.org/docs/15/sql-syntax-lexical.html')
    expect(md.startsWith('## 4.1. Lexical Structure\n')).toBe(true)
    expect(md).toContain('### 4.1.5. Comments\n\nA comment is a sequence of characters beginning with double dashes')
    expect(md).toContain('```\nSELECT * FROM MY_TABLE;\nUPDATE MY_TABLE SET A = 5;')
    expect(md).toMatch(/\| Operator\/Element \| Associativity \| Description \|\n\| --- \| --- \| --- \|/)
    expect(md.endsWith('there are corner cases in which a query might change behavior without any parsing error being reported.')).toBe(true)
  })

  test('index.html keeps its title, copyright line and table of contents', () => {
    const md = main(read('pgdoc/index.html'), 'https://www.postgresql.org/docs/15/index.html')
    expect(md.startsWith('# PostgreSQL 15.20 Documentation\n\n### The PostgreSQL Global Development Group\n\nCopyright © 1996–2026')).toBe(true)
    expect(md).toContain('[Legal Notice](https://www.postgresql.org/docs/15/legalnotice.html)')
    expect(md.endsWith('[Index](https://www.postgresql.org/docs/15/bookindex.html)')).toBe(true)
  })
})
