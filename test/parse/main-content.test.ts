import { describe, expect, test } from 'bun:test'
import { ARTICLE, ARTICLE_MD, links, main, page, read, whole } from './main-content-pages'

// Chrome found by its tag, role or name, and the content root; chrome found by its place at the
// content's edges is tested in edge-chrome.test.ts.

describe('main content on pages with chrome', () => {
  test('the article alone converts to article.md with main content on or off', () => {
    expect(whole(ARTICLE)).toBe(ARTICLE_MD)
    expect(main(ARTICLE)).toBe(ARTICLE_MD)
  })

  for (const name of ['landmarks', 'div-layout']) {
    test(`${name}.html: the chrome goes, the article (headings, paragraphs, code, table, list) stays whole`, () => {
      const html = read(`main-content/${name}.html`)
      expect(main(html)).toBe(ARTICLE_MD)
      const all = whole(html)
      for (const chrome of ['Accept all', 'In this section', '[Reference](', '[Contact](', '© 2024']) expect(all).toContain(chrome)
    })
  }

  // Each kind of chrome on its own, where pages put it, around the article in a plain <div>.
  const pieces: Record<string, string[]> = {
    '<nav> bar': [`<nav>${links('Guides', 'Reference', 'Blog')}</nav>`, 'start'],
    '<header> with a logo and links': [`<header><a href="/"><img src="/logo.png" alt="DB Guides"></a>${links('Guides', 'Blog')}</header>`, 'start'],
    '<footer>': ['<footer><p>© 2024 DB Guides</p><p>Made with care in a small town by people who like databases.</p></footer>', 'end'],
    '<aside> sidebar': [`<aside><h3>Related guides</h3>${links('Vacuum', 'Indexes')}<p>Guides are updated for each release.</p></aside>`, 'end'],
    'role=navigation': [`<div role="navigation">${links('Guides', 'Blog')}</div>`, 'start'],
  }
  for (const [name, [chrome, where]] of Object.entries(pieces)) {
    test(`${name} is removed, the article intact`, () => {
      const article = `<div class="a">${ARTICLE}</div>`
      const html = page(...(where === 'start' ? [chrome!, article] : [article, chrome!]))
      expect(whole(html)).not.toBe(ARTICLE_MD)
      expect(main(html)).toBe(ARTICLE_MD)
    })
  }
})

describe('main content keeps what is content', () => {
  test('sections whose anchor ids contain a chrome word stay when they are one of a series; an id alone named so goes', () => {
    const section = (id: string, title: string) => `<div class="sect2" id="${id}"><h3>${title}</h3><p>About ${title.toLowerCase()}, in a paragraph.</p></div>`
    const html = page(
      `<div class="sect1"><h2>Lexical structure</h2><p>Intro text of the section.</p>${section('sql-syntax-identifiers', 'Identifiers')}${section('sql-syntax-comments', 'Comments')}</div>`,
    )
    expect(main(html)).toContain('### Comments\n\nAbout comments, in a paragraph.')
    const comments = page(`<div class="a">${ARTICLE}<div id="comments"><h3>2 comments</h3><p>Nice.</p></div></div>`)
    expect(main(comments)).toBe(ARTICLE_MD)
  })
})
