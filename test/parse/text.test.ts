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

test('a <pre> with a long run of spaces keeps it; only spaces before a line break go', async () => {
  const spaces = ' '.repeat(100_000)
  expect(await htmlToText(`<pre>a${spaces}b${spaces}\nc</pre>`)).toBe(`a${spaces}b\nc`)
}, LINEAR_MS)

test('textarea text is kept as written up to its end tag, in any case', async () => {
  expect(await htmlToText('<textarea>a  <b>b</b></TEXTAREA ><p>c</p><textarea>d</textarea>')).toBe('a  <b>b</b>\n\nc\n\nd')
})
