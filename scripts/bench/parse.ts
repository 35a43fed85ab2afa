#!/usr/bin/env bun
// Benchmark of the parse passes (not a test): for each fixture page and two generated pages
// (256 KB and 2 MB), (a) the streaming links+metadata scan, (b) toMarkdown (plain and main_content) and
// (c) plain turndown with the GFM plugin on the same input, interleaved in the same run.
// Reports MB/s, the ratio markdown / plain turndown per page and overall, and the slowest
// single call. Exits 0 whatever the numbers; non-zero on a crash.
//
//   bun scripts/bench/parse.ts [--min-ms 300] [--min-reps 5] [--json PATH]
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import { basename, join, relative } from 'node:path'
import { parseArgs } from 'node:util'
import TurndownService from 'turndown'
import { toMarkdown } from '../../src/parse/markdown'
import { scanHtml } from '../../src/parse/scan'

const ROOT = join(import.meta.dir, '..', '..')
const BASE = 'https://bench.example/section/page.html'

// The GFM plugin ships no types; the cast names the one export used.
const { gfm } = require('@joplin/turndown-plugin-gfm') as { gfm: TurndownService.Plugin }
const plain = new TurndownService().use(gfm)

type Page = { name: string; html: string; bytes: number }
type Method = { name: string; run: (html: string) => unknown }
type Timing = { median: number; max: number; reps: number }
type Row = { page: string; bytes: number; timings: Record<string, Timing>; scan_loop_ms: number }

const METHODS: Method[] = [
  { name: 'scan', run: (html) => scanHtml(html, BASE) },
  { name: 'markdown', run: (html) => toMarkdown(html, BASE, { main_content: false }) },
  { name: 'markdown_main', run: (html) => toMarkdown(html, BASE, { main_content: true }) },
  { name: 'turndown', run: (html) => plain.turndown(html) },
]

function fixturePages(): Page[] {
  const dir = join(ROOT, 'test', 'fixtures')
  const files: string[] = []
  const walk = (d: string) => {
    for (const entry of readdirSync(d)) {
      const path = join(d, entry)
      if (statSync(path).isDirectory()) walk(path)
      else if (entry.endsWith('.html')) files.push(path)
    }
  }
  try {
    walk(dir)
  } catch {
    // no fixtures yet: the generated page still runs
  }
  return files.sort().map((path) => {
    const html = readFileSync(path, 'utf8')
    return { name: relative(dir, path), html, bytes: Buffer.byteLength(html) }
  })
}

async function time(method: Method, html: string): Promise<number> {
  const start = performance.now()
  await method.run(html)
  return performance.now() - start
}

// Methods alternate within each repetition so a drift of the machine hits all of them alike.
async function measure(page: Page, minMs: number, minReps: number): Promise<Row> {
  const samples: Record<string, number[]> = Object.fromEntries(METHODS.map((m) => [m.name, []]))
  for (const m of METHODS) await time(m, page.html) // warm-up, also of the JIT
  for (const m of METHODS) await time(m, page.html)
  let spent = 0
  for (let rep = 0; rep < minReps || spent < minMs * METHODS.length; rep++) {
    for (const m of METHODS) {
      const ms = await time(m, page.html)
      samples[m.name]!.push(ms)
      spent += ms
    }
  }
  const timings: Record<string, Timing> = {}
  for (const [name, list] of Object.entries(samples)) {
    const sorted = [...list].sort((a, b) => a - b)
    timings[name] = { median: sorted[sorted.length >> 1]!, max: sorted[sorted.length - 1]!, reps: list.length }
  }
  return { page: page.name, bytes: page.bytes, timings, scan_loop_ms: await scanLoop(page.html, minMs) }
}

// The scan as a crawl runs it: back to back, warm. The interleaved figure above also charges it
// for the cold caches and garbage collections the markdown methods leave behind.
async function scanLoop(html: string, minMs: number): Promise<number> {
  let calls = 0
  const start = performance.now()
  while (performance.now() - start < minMs || calls < 20) {
    await scanHtml(html, BASE)
    calls++
  }
  return (performance.now() - start) / calls
}

const mbps = (bytes: number, ms: number) => bytes / 1e6 / (ms / 1000)
const pad = (s: string, n: number) => (s.length >= n ? s : s + ' '.repeat(n - s.length))
const num = (x: number, digits = 1) => x.toFixed(digits).padStart(8)

async function main() {
  const { values } = parseArgs({
    options: { 'min-ms': { type: 'string', default: '300' }, 'min-reps': { type: 'string', default: '5' }, json: { type: 'string' } },
  })
  const minMs = Number(values['min-ms'])
  const minReps = Number(values['min-reps'])
  // A mid-size page as well: most real pages are tens to hundreds of KB, beyond the small fixtures.
  const generated = [
    { name: 'generated-256kb.html', html: generatedPage(256 * 1024) },
    { name: 'generated-2mb.html', html: generatedPage(2 * 1024 * 1024) },
  ]
  const pages = [...fixturePages(), ...generated.map((g) => ({ ...g, bytes: Buffer.byteLength(g.html) }))]

  const rows: Row[] = []
  for (const page of pages) rows.push(await measure(page, minMs, minReps))

  const names = METHODS.map((m) => m.name)
  console.log(`${pad('page', 34)}${pad('KB', 9)}${names.map((n) => pad(`${n} MB/s`, 20)).join('')}${pad('scan loop MB/s', 17)}md/td  main/td`)
  for (const r of rows) {
    const t = r.timings
    const ratio = t.markdown!.median / t.turndown!.median
    const ratioMain = t.markdown_main!.median / t.turndown!.median
    console.log(
      `${pad(basename(r.page).slice(0, 33), 34)}${pad((r.bytes / 1024).toFixed(1), 9)}` +
        names.map((n) => pad(num(mbps(r.bytes, t[n]!.median)), 20)).join('') +
        pad(num(mbps(r.bytes, r.scan_loop_ms)), 17) +
        `${ratio.toFixed(2)}   ${ratioMain.toFixed(2)}`,
    )
  }
  const totals = Object.fromEntries(names.map((n) => [n, rows.reduce((sum, r) => sum + r.timings[n]!.median, 0)]))
  const bytes = rows.reduce((sum, r) => sum + r.bytes, 0)
  const loopTotal = rows.reduce((sum, r) => sum + r.scan_loop_ms, 0)
  const worst = (n: string) => rows.reduce((w, r) => (r.timings[n]!.max > w.ms ? { page: r.page, ms: r.timings[n]!.max } : w), { page: '', ms: 0 })
  console.log(
    `${pad('ALL (sum of medians)', 34)}${pad((bytes / 1024).toFixed(1), 9)}` +
      names.map((n) => pad(num(mbps(bytes, totals[n]!)), 20)).join('') +
      pad(num(mbps(bytes, loopTotal)), 17) +
      `${(totals.markdown! / totals.turndown!).toFixed(2)}   ${(totals.markdown_main! / totals.turndown!).toFixed(2)}`,
  )
  for (const n of names) {
    const w = worst(n)
    console.log(`slowest single ${pad(n, 14)} ${w.ms.toFixed(1)} ms (${basename(w.page)})`)
  }
  if (values.json) {
    const summary = {
      base: BASE,
      pages: rows,
      aggregate: { bytes, median_ms: totals, scan_loop_ms: loopTotal, ratio_markdown_turndown: totals.markdown! / totals.turndown!, ratio_main_turndown: totals.markdown_main! / totals.turndown! },
      worst: Object.fromEntries(names.map((n) => [n, worst(n)])),
    }
    writeFileSync(values.json, JSON.stringify(summary, null, 2))
  }
}

// ---------------------------------------------------------------- generated page (deterministic)

// mulberry32: a fixed seed gives the same page on every run and machine.
function random(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed)
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

const WORDS = (
  'the of and to in is that for it as was with be by on not he this are or his from at which but have an they ' +
  'you were her all she there would their we him been has when who will more no if out so said what up its about into than ' +
  'them can only other new some could time these two may then do first any my now such like our over man me even most made ' +
  'after also did many before must through back years where much your way well down should because each just those people'
).split(' ')

/**
 * A news-site-shaped page of about `size` bytes, marked up the way framework-built sites are:
 * chrome (cookie banner, header and nav, sidebar, footer), a JSON state blob, articles nested
 * in layout wrappers with classes, paragraphs with inline links and formatting, lists, tables,
 * code blocks, figures and share bars with SVG icons.
 */
function generatedPage(size: number): string {
  const rnd = random(42)
  const pick = <T>(list: T[]) => list[Math.floor(rnd() * list.length)]!
  const int = (n: number) => Math.floor(rnd() * n)
  const words = (n: number) => Array.from({ length: n }, () => pick(WORDS)).join(' ')
  const inline = () => {
    const r = rnd()
    if (r < 0.15) return `<a href="/story/${int(1e5)}" class="inline-link">${words(3)}</a>`
    if (r < 0.22) return `<strong>${words(2)}</strong>`
    if (r < 0.28) return `<em>${words(2)}</em>`
    if (r < 0.31) return `<code>${pick(WORDS)}_${pick(WORDS)}()</code>`
    return words(6 + int(10))
  }
  const paragraph = () => `<p class="article-body__paragraph">${Array.from({ length: 4 + int(6) }, inline).join(' ')}.</p>\n`
  const list = (depth: number): string => {
    const tag = rnd() < 0.5 ? 'ul' : 'ol'
    const items = Array.from({ length: 3 + int(4) }, () => `<li class="list-item">${inline()}${depth < 2 && rnd() < 0.2 ? list(depth + 1) : ''}</li>`)
    return `<${tag} class="article-list">${items.join('\n')}</${tag}>\n`
  }
  const table = () => {
    const cols = 3 + int(4)
    const head = `<thead><tr>${Array.from({ length: cols }, () => `<th scope="col">${words(2)}</th>`).join('')}</tr></thead>`
    const rows = Array.from({ length: 5 + int(10) }, () => `<tr>${Array.from({ length: cols }, () => `<td class="cell">${rnd() < 0.3 ? inline() : (rnd() * 1000).toFixed(2)}</td>`).join('')}</tr>`)
    return `<div class="table-wrapper"><table class="data-table">${head}<tbody>${rows.join('\n')}</tbody></table></div>\n`
  }
  const code = () =>
    `<div class="code-block"><pre><code class="language-${pick(['js', 'python', 'go'])}">${Array.from({ length: 4 + int(8) }, () => `  ${pick(WORDS)}(${pick(WORDS)}) &lt;= ${int(100)}`).join(
      '\n',
    )}</code></pre></div>\n`
  const image = () =>
    `<figure class="article-figure"><div class="image-frame"><img src="/img/${int(1e5)}.jpg" alt="${words(3)}" width="640" height="360" loading="lazy"></div><figcaption class="caption">${words(8)}</figcaption></figure>\n`
  const icon = `<svg class="icon" viewBox="0 0 24 24" aria-hidden="true"><path d="M12 2L2 7l10 5 10-5-10-5z"></path></svg>`
  const nav = `<nav class="main-nav" aria-label="Main"><ul class="nav-list">${Array.from({ length: 60 }, (_, i) => `<li class="nav-item"><a class="nav-link" href="/section/${i}">${words(2)}</a></li>`).join('')}</ul></nav>`
  const state = JSON.stringify({ props: Array.from({ length: 1500 }, (_, i) => ({ id: i, title: words(6), slug: `/story/${i}` })) })
  const parts = [
    `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${words(6)}</title>`,
    `<meta name="description" content="${words(20)}"><link rel="canonical" href="/section/page.html">`,
    `<script type="application/ld+json">{"@type":"NewsArticle","headline":"${words(6)}"}</script>`,
    `<style>${'.c{color:red}'.repeat(400)}</style><script>${'var x=1;'.repeat(600)}</script></head><body class="page">`,
    `<div id="__app"><div class="cookie-banner" role="dialog">We use cookies. <button>Accept</button></div>`,
    `<header class="site-header"><div class="container"><a class="logo" href="/">${icon}Site</a>${nav}</div></header>`,
    '<main id="main" class="site-main"><div class="container"><div class="row">',
  ]
  let length = parts.join('').length + state.length
  while (length < size - 6000) {
    const blocks = [
      `<div class="col col-md-8"><div class="card"><div class="card-body"><article class="story" data-id="${int(1e6)}">`,
      `<header class="story__header"><h2 class="story__title">${words(8)}</h2><p class="byline">By <a href="/by/${int(100)}">${words(2)}</a></p></header>`,
      '<div class="story__body"><div class="rich-text">',
    ]
    for (let i = 0; i < 12; i++) {
      const r = rnd()
      blocks.push(r < 0.55 ? paragraph() : r < 0.7 ? list(0) : r < 0.8 ? table() : r < 0.9 ? code() : r < 0.95 ? image() : `<h3 class="subhead">${words(5)}</h3>`)
    }
    blocks.push(
      `</div></div><div class="share-bar">${['x', 'fb', 'mail'].map((n) => `<a class="share-${n}" href="https://social.example/${n}">${icon}<span class="sr-only">Share</span></a>`).join('')}</div>`,
    )
    blocks.push('</article></div></div></div>\n')
    const block = blocks.join('')
    parts.push(block)
    length += block.length
  }
  parts.push(`</div></div><aside class="sidebar">${list(0)}</aside></main>`)
  parts.push(`<footer class="site-footer">${nav}<p>${words(30)}</p></footer></div>`)
  parts.push(`<script id="__STATE__" type="application/json">${state}</script></body></html>`)
  return parts.join('')
}

await main()
