import { expect, test } from 'bun:test'
import { htmlToText } from '../../src/parse/text'

test('blocks give lines, paragraphs blank lines; whitespace collapsed; hidden text left out', async () => {
  const html = `<!doctype html><html><head><title>Menu</title><style>p { color: red }</style>
<script>var s = "<p>not text</p>"</script></head>
<body><header><nav><a href="/">Home</a> | <a href="/about">About&nbsp;us</a></nav></header>
<main><h1>Caf&eacute;   menu</h1>
<p>Fresh <b>coffee</b>
   and   <i>tea</i>.</p><p>First line<br>Second line</p>
<ul><li>Espresso</li><li>Flat <span>white</span></li></ul>
<table><tr><th>Drink</th><th>Price</th></tr><tr><td>Latte</td><td>&euro;3.50</td></tr></table>
<noscript>Enable JavaScript</noscript><template><p>Template</p></template>
<div>One</div><div>Two</div><p> </p><p></p><section><p>After empty paragraphs</p></section></main>
<footer>&copy; 2024 Caf&eacute;</footer></body></html>`
  expect(await htmlToText(html)).toBe(`Home | About us

Café menu

Fresh coffee and tea.

First line
Second line

Espresso
Flat white

Drink Price
Latte €3.50

One
Two

After empty paragraphs

© 2024 Café`)
})

test('<pre> keeps its spaces and line breaks', async () => {
  const html = `<p>Run:</p><pre><code>if x &lt; 1:
    print("one")</code></pre><p>Done.</p>`
  expect(await htmlToText(html)).toBe('Run:\n\nif x < 1:\n    print("one")\n\nDone.')
})

test('inline elements do not break words apart; text without markup stays as it is', async () => {
  expect(await htmlToText('<p>re<b>mark</b>able <em>and</em><strong> spaced</strong></p>')).toBe('remarkable and spaced')
  expect(await htmlToText('plain   words')).toBe('plain words')
  expect(await htmlToText('')).toBe('')
})

// Inputs that took seconds when a regex or a copy of the rest of the page ran per character or
// per element; the time limit only makes a relapse fail fast.
const LINEAR_MS = 3000

test(
  'a <pre> with a long run of spaces keeps it; only spaces before a line break go',
  async () => {
    const spaces = ' '.repeat(100_000)
    expect(await htmlToText(`<pre>a${spaces}b${spaces}\nc</pre>`)).toBe(`a${spaces}b\nc`)
  },
  LINEAR_MS,
)

test('textarea text is kept as written up to its end tag, in any case', async () => {
  expect(await htmlToText('<textarea>a  <b>b</b></TEXTAREA ><p>c</p><textarea>d</textarea>')).toBe('a  <b>b</b>\n\nc\n\nd')
})

test('superscripts and subscripts are marked, not glued to their base: 2^31, not 231', async () => {
  const html = `<h2>E = mc<sup>2</sup></h2><p>2<sup>31</sup> &minus; 1, H<sub>2</sub>O, x<sub>i+1</sub>, e<sup><i>i</i>&pi;</sup>,
2<sup>2<sup>n</sup></sup>, a claim<sup><a href="#fn1">1</a></sup>, a cite<sup>[2]</sup>, a note<sup>*</sup>, empty a<sup></sup>b<sub> </sub>c.</p>
<table><tr><td>CO<sub>2</sub></td><td>2<sup>10</sup></td></tr></table><pre>O(n<sup>2</sup>)</pre>`
  expect(await htmlToText(html)).toBe('E = mc^2\n\n2^31 − 1, H_2O, x_(i+1), e^iπ, 2^(2^n), a claim^1, a cite^[2], a note^*, empty ab c.\n\nCO_2 2^10\n\nO(n^2)')
})

test('a superscript ends where the HTML parser ends it: at its end tag, or its block or cell', async () => {
  expect(await htmlToText('<p>2<sup>31</p><p>next</p>')).toBe('2^31\n\nnext')
  expect(await htmlToText('<table><tr><td>2<sup>3</td><td>4</td></tr></table>')).toBe('2^3 4')
  expect(await htmlToText('<p>a<sup>b<br>c</sup>d</p>')).toBe('a^(b\nc)d')
  expect(await htmlToText('<p>2<sup>x</sub>y</sup>z</p>')).toBe('2^xyz')
  expect(await htmlToText('<p>x</sup>y</q>z</p>')).toBe('xyz')
})

test('a <q> is in the quotation marks a browser shows, single inside double', async () => {
  expect(await htmlToText('<p>She said <q>it is <q>fine</q></q>, then <q></q>left.</p>')).toBe(`She said "it is 'fine'", then left.`)
  expect(await htmlToText('<p><q>open</p><p>after</p>')).toBe('"open"\n\nafter')
  expect(await htmlToText('<q><sup>x</sup></q> <sup><q>y</q></sup>')).toBe('"^x" ^("y")')
})

test(
  'deeply nested superscripts and quotations stay linear',
  async () => {
    const deep = `a${'<sup>x'.repeat(50_000)}${'</sup>'.repeat(50_000)}`
    const text = await htmlToText(deep)
    expect(text.startsWith('a^(x^(x^(')).toBe(true)
    expect(text.replace(/[^x]/g, '').length).toBe(50_000)
    expect(await htmlToText(`${'<q>'.repeat(20_000)}q${'</q>'.repeat(20_000)}`)).toBe(`"${"'".repeat(7)}q${"'".repeat(7)}"`)
  },
  LINEAR_MS,
)
