import { describe, expect, test } from 'bun:test'
import { tagNames, walkTags } from '../../src/parse/tags'

const LINKS = tagNames(
  new Map([
    ['a', ['href']],
    ['area', ['href']],
  ]),
)

/** The hrefs of a[href] and area[href] as walkTags finds them, in order. */
function walkedLinks(html: string): string[] {
  const out: string[] = []
  walkTags(html, {
    names: LINKS,
    start: (tag) => void (tag.has(0) && out.push(tag.value(0)!)),
  })
  return out
}

/** The same, as HTMLRewriter (lol-html, a tokenizer built to the HTML standard) finds them: the oracle. */
function rewriterLinks(html: string): string[] {
  const out: string[] = []
  new HTMLRewriter().on('a[href], area[href]', { element: (el) => void out.push(el.getAttribute('href')!) }).transform(html)
  return out
}

// Each case holds links the walk must find and markup that only looks like links.
const CASES: Record<string, string> = {
  comments: '<a href=1><!-- <a href=no1> --><!--> <a href=2><!---> <a href=3><!-- x --!> <a href=4><!-- a -- b --- > <a href=no2> -->',
  'bogus comments': '<!DOCTYPE html><! <a href=no1> ><a href=1><? <a href=no2> ?><a href=2></ <a href=no3> ><a href=3></><a href=4></1 <a href=no4>>',
  'quoted > and <': `<a href="1" title="a > b <a href=no1>"><a href='2' data-x='<a href=no2>'><a href=3 x=">"><a title=">" href="4">`,
  'end tags with attributes': '<a href=1></a title="<a href=no1>"><a href=2></div x=\'>\' >',
  script: '<script>var a = "<a href=no1>"; if (a < b) {}</script ><a href=1><SCRIPT type="x">"</script>"<a href=2></SCRIPT><a href=3><script>"</scriptx><a href=no3>"</script><a href=4>',
  'style, xmp, iframe, noembed, noframes':
    '<style>a::before{content:"<a href=no1>"}</style><a href=1><xmp><a href=no2></xmp><iframe><a href=no3></iframe><noembed><a href=no4></noembed><noframes><a href=no5></noframes><a href=2>',
  'title and textarea hold text': '<title><a href=no1></title><a href=1><textarea><a href=no2></TEXTAREA><a href=2>',
  // noscript holds text, as with scripting on (HTMLRewriter's reading).
  'noscript holds text; template holds markup': '<noscript><a href=no1></noscript><template><a href=1></template>',
  'plaintext ends all markup': '<a href=1><plaintext><a href=no1></plaintext><a href=no2>',
  'script escapes: a script written inside a comment in a script': `<script><!--\ndocument.write('<script src="x.js"></script>');document.write('<a href="no1">');\n//--></script><a href=1>`,
  'script escapes: an escape closed before the end tag': '<script><!-- x --> <a href=no1></script><a href=1><script><!--<script></script>x="<textarea>";--></script><a href=2>',
  'script escapes: <!--> and <!---> escape nothing': '<script><!--></script><a href=1><script><!---></script><a href=2><script><!-- </SCRIPT><a href=3>',
  'svg and math outside their raw text': '<svg><a href=1><title>t</title></svg><math><a href=2></math><svg><p>x</p><script>"<a href=no1>"</script><a href=3>',
  'upper case, odd spacing, no value, duplicates': '<A HREF=1><a\nhref\n=\n"2"><a href><area href=3><a HREF=4 href=no1><a data-href=no2><abbr href=5>',
  'a lone <, and a tag the text ends inside': 'a < b <3 <a href=1> <a href="no1>',
  'a tag ending the text without its >': '<a href=1><a href=no1',
  'unterminated comment': '<a href=1><!-- <a href=no1>',
  'unterminated script': '<a href=1><script><a href=no1>',
}

describe('walkTags finds the elements an HTML tokenizer finds', () => {
  for (const [name, html] of Object.entries(CASES)) {
    test(name, () => {
      const walked = walkedLinks(html)
      expect(walked).toEqual(rewriterLinks(html))
      expect(walked.filter((h) => h.startsWith('no'))).toEqual([])
    })
  }

  test('a random soup of the same pieces', () => {
    // Pieces glued in random orders: whatever the walk and the oracle disagree on shows here.
    const pieces = [
      '<a href=L>',
      '</a>',
      '<!--',
      '-->',
      '<script>',
      '</script>',
      '<title>',
      '</title>',
      '"',
      "'",
      '<b x="',
      '>',
      '<',
      '</',
      '<!x',
      '<?',
      'text ',
      '<style>',
      '</style>',
      '<textarea>',
      '</textarea>',
      '<area href=A>',
      '<script><!--',
      '-->',
      '<script ',
      '</script ',
    ]
    let seed = 7
    const next = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31), seed)
    for (let round = 0; round < 2000; round++) {
      let html = ''
      const n = 3 + (next() % 12)
      for (let k = 0; k < n; k++) html += pieces[next() % pieces.length]!.replace(/[LA]$/, String(k))
      expect(walkedLinks(html), html).toEqual(rewriterLinks(html))
    }
  })
})

test('inside svg, style, script and title are raw text, as in HTML (HTMLRewriter reads markup there)', () => {
  // Foreign content is not followed (tags.ts says why): markup inside them is not read.
  const html = '<svg><style><a href=no1></style><title><a href=no2></title><![CDATA[ > <a href=1>]]></svg><a href=2>'
  expect(walkedLinks(html)).toEqual(['1', '2'])
  expect(rewriterLinks(html)).toEqual(['no1', 'no2', '2'])
})

describe('linear time on hostile pages', () => {
  // The time limits only make a relapse fail fast.
  test('many escaped scripts, unclosed', () => {
    const html = `<script>${'<!-- <script> x --> '.repeat(50_000)}`
    expect(walkedLinks(html + '</script><a href=1>')).toEqual(['1'])
  }, 2000)
})

test('raw text goes to `text`, once, for the names asked', () => {
  const html = '<title>A &amp; <b>B</b></title><script type="application/ld+json">{"a": "</scrip"}</script><style>x</style>'
  const seen: [string, string][] = []
  walkTags(html, {
    names: tagNames(
      new Map([
        ['title', []],
        ['script', []],
      ]),
    ),
    start: () => {},
    text: (name, from, to) => void seen.push([name, html.slice(from, to)]),
  })
  expect(seen).toEqual([
    ['title', 'A &amp; <b>B</b>'],
    ['script', '{"a": "</scrip"}'],
  ])
})
