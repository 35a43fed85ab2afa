// The test behind TRAWL_SCRAPE_RENDER=auto (decision 94): which pages need script to show their
// content. Shells of single-page apps, empty mount points and <noscript> pleas are; pages whose
// text is in the HTML, and pages with no script that runs, are not.
import { describe, expect, test } from 'bun:test'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { needsScript, SHELL_TEXT, STRONG_TEXT } from '../../src/scrape/needs-script'

const FIXTURES = join(import.meta.dir, '../fixtures')
const page = (head: string, body: string) => `<!doctype html><html><head><title>A title that is not body text at all, however long it runs on</title>${head}</head><body>${body}</body></html>`
const text = (n: number) => 'x'.repeat(n)
const BUNDLE = '<script src="/bundle.js"></script>'

describe('needsScript', () => {
  test('shells: little text with a script that runs', () => {
    expect(needsScript(page(BUNDLE, '<div id="root"></div>'))).toBe('little_text')
    expect(needsScript(page('', `<p>Loading…</p><script>fetch('/api').then(r => r.json()).then(render)</script>`))).toBe('little_text')
    expect(needsScript(page('<script type="module" src="/m.js"></script>', ''))).toBe('little_text')
    expect(needsScript(page('<SCRIPT TYPE="text/javascript">location.replace("/next")</SCRIPT>', ''))).toBe('little_text')
    // The threshold: text is counted without whitespace.
    expect(needsScript(page(BUNDLE, `<p>${text(SHELL_TEXT - 1)}</p>`))).toBe('little_text')
    expect(needsScript(page(BUNDLE, `<p>${text(SHELL_TEXT)}</p>`))).toBeNull()
    expect(needsScript(page(BUNDLE, `<p>${'a '.repeat(SHELL_TEXT - 1)}</p>`))).toBe('little_text')
  })

  test('an empty app root with some text around it', () => {
    const chrome = `<header>${text(600)}</header>`
    for (const root of ['<div id="root"></div>', "<div class=x id='app'>\n </div>", '<div id=__next></div>', '<main id="__nuxt"></main>', '<div id="___gatsby"></div>', '<app-root></app-root>']) {
      expect([root, needsScript(page(BUNDLE, chrome + root))]).toEqual([root, 'empty_app_root'])
    }
    // A root with content, or an id that is not a framework's, is a page.
    expect(needsScript(page(BUNDLE, `${chrome}<div id="root"><p>server-rendered</p></div>`))).toBeNull()
    expect(needsScript(page(BUNDLE, `${chrome}<div id="rooted"></div>`))).toBeNull()
    // Enough text of its own: the page stands without the app.
    expect(needsScript(page(BUNDLE, `<article>${text(STRONG_TEXT)}</article><div id="app"></div>`))).toBeNull()
  })

  test('a <noscript> that asks for JavaScript, with some text around it', () => {
    const chrome = `<nav>${text(500)}</nav>`
    for (const plea of [
      'You need to enable JavaScript to run this app.',
      'JavaScript is required',
      'Please turn on JavaScript in your browser',
      'This site requires JavaScript: javascript is disabled',
    ]) {
      expect([plea, needsScript(page(BUNDLE, `${chrome}<noscript>${plea}</noscript>`))]).toEqual([plea, 'noscript_asks_javascript'])
    }
    expect(needsScript(page(BUNDLE, `${chrome}<noscript><img src="/pixel.gif"></noscript>`))).toBeNull()
    // An article with a plea for its comment widget is an article.
    expect(needsScript(page(BUNDLE, `<article>${text(STRONG_TEXT)}</article><noscript>Enable JavaScript to see comments.</noscript>`))).toBeNull()
  })

  test('no script that runs: nothing for Chromium to change', () => {
    expect(needsScript(page('', '<div id="root"></div>'))).toBeNull()
    expect(needsScript(page('<script type="application/ld+json">{"@type":"Thing"}</script>', '<p>tiny</p>'))).toBeNull()
    expect(needsScript(page('<script type="text/template"><p>x</p></script><script type="application/json" id="__NEXT_DATA__">{}</script>', ''))).toBeNull()
  })

  test('hidden text is not visible text: scripts, styles, templates, comments, the head', () => {
    const hidden = `<script>var s = "${text(3000)}"</script><style>p{content:"${text(3000)}"}</style><template>${text(3000)}</template><!-- ${text(3000)} --><noscript>${text(3000)}</noscript>`
    expect(needsScript(page(BUNDLE, `${hidden}<div id="root"></div>`))).toBe('little_text')
    expect(needsScript(`<html><head><title>${text(3000)}</title>${BUNDLE}</head><body></body></html>`)).toBe('little_text')
    // Markup inside a script is the script's: its </div> does not fill a root, its text is not shown.
    expect(needsScript(page(BUNDLE, `<div id="root"></div><script>document.write("<p>${text(3000)}</p>")</script>`))).toBe('little_text')
    // Without <body> or </head>, everything but the hidden elements counts.
    expect(needsScript(`<title>t</title>${BUNDLE}<p>${text(300)}</p>`)).toBeNull()
  })

  test('broken markup ends the scan without error', () => {
    expect(needsScript(page(BUNDLE, '<div id="root"></div><script>never closed'))).toBe('little_text')
    expect(needsScript(page(BUNDLE, '<p>a < b and <!-- an open comment'))).toBe('little_text')
    expect(needsScript('')).toBeNull()
  })

  test('fixture pages with their text in the HTML need no script', () => {
    for (const file of ['extract/article.html', 'markdown/tables.html', 'markdown/blog-post.html']) {
      expect([file, needsScript(readFileSync(join(FIXTURES, file), 'utf8'))]).toEqual([file, null])
    }
  })

  test('the scan stops early on a long page: a 5 MB article costs well under a millisecond', () => {
    const long = page(BUNDLE, `<article>${'<p>A paragraph of the story, with words in it.</p>'.repeat(100_000)}</article>`)
    needsScript(long)
    const started = performance.now()
    for (let i = 0; i < 100; i++) expect(needsScript(long)).toBeNull()
    expect((performance.now() - started) / 100).toBeLessThan(1)
  })
})
