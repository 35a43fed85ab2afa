/**
 * One pass over a document for everything that needs no tree: links, metadata, assets and the
 * links of navigator selectors. Steps that need a tree build one elsewhere; this pass is the
 * hot path of every crawled page.
 *
 * Speed: the tags are found by walkTags (tags.ts), which reads only the start tags the scan
 * wants, their few attributes, and the text of the first title and of JSON-LD scripts. Links are
 * folded as they are met (link-fold.ts), so what the scan holds grows with a page's distinct
 * links, not its anchors. HTMLRewriter runs only for navigator selectors other than plain
 * anchors (it knows CSS selectors); every call into a handler costs it about a microsecond, so
 * it then reads links by their order alone, and the scan keeps every link for it.
 */
import { absoluteHttp, decodeAttr, Resolver } from './html-values'
import { LinkFold } from './link-fold'
import { LINK_ATTRIBUTES, linkOuts, sinkRecord, type LinkOut, type LinkRecord } from './links'
import { MetadataCollector, type Metadata } from './metadata'
import { htmlLang } from './start-tag'
import { tagNames, walkTags } from './tags'

export type { LinkOut, LinkSource } from './links'
/** LinkOut of links found on a tree (navigator fallback), by the scan's rules. */
export { linkOutsFrom } from './links'
export type { Metadata } from './metadata'

/** What one pass over a document finds. */
export type Scan = {
  /** The document URL (fragment dropped), or the `<base href>` resolved against it. */
  base_url: string
  /** Every a[href] and area[href] with an http(s) URL, deduplicated. */
  links: LinkOut[]
  metadata: Metadata
  /** Absolute http(s) URLs of img[src], stylesheet link[href] and script[src], each once. */
  assets: string[]
  /** A robots meta tag says nofollow (or none): every link of the page is nofollow. */
  robots_nofollow: boolean
  /** Per navigator selector: the matched elements that carry an http(s) href, deduplicated;
   *  undefined when HTMLRewriter cannot run that selector (the caller falls back to a tree). */
  selected: (LinkOut[] | undefined)[]
}

/** Options of scanHtml. */
export type ScanOptions = { navigators?: string[] }

// A navigator of anchors selects exactly what the links pass records: no selector needed.
// Matched on the trimmed selector (`a [href]` is a descendant selector, not this one).
const ANCHORS_ONLY = /^a(\[\s*href\s*\])?$/

// A navigator's finds: records of the elements carrying href it matched, a link element
// (a[href], area[href]) with its index among the links the pass met.
type Found = (LinkRecord & { index?: number })[]

/** Start tags the scan reads, with the attributes it wants of each, in the order `start` reads them. */
const WANTED = tagNames(
  new Map([
    ['a', LINK_ATTRIBUTES],
    ['area', LINK_ATTRIBUTES],
    ['base', ['href']],
    ['img', ['src']],
    ['link', ['href', 'rel']],
    ['meta', ['property', 'name', 'content', 'http-equiv']],
    ['script', ['src', 'type']],
    ['title', []],
  ]),
)

/** Scans decoded HTML from `baseUrl` (absolute; throws TypeError otherwise). */
export async function scanHtml(html: string, baseUrl: string, opts: ScanOptions = {}): Promise<Scan> {
  const documentUrl = new URL(baseUrl)
  documentUrl.hash = ''
  let base = documentUrl
  let baseSeen = false
  const meta = new MetadataCollector(htmlLang(html))
  const selectors = opts.navigators ?? []
  // A navigator pass reads links by their index among all of them: then every one is kept.
  const passNeeded = selectors.some((s) => !anchorsOnly(s) && rewriterSupports(s))
  const fold = new LinkFold(html, passNeeded)
  // Raw src/href values of assets, in document order, each once; resolved after the pass.
  const assetRefs = new Set<string>()
  const asset = (raw: string) => void assetRefs.add(raw)
  // Whether the collector wants the text of the title or script element just met.
  let textWanted = false
  walkTags(html, {
    names: WANTED,
    start(tag) {
      if (tag.name === 'a' || tag.name === 'area') {
        // Nothing of a link is sliced here: the fold compares it with the links met before.
        if (tag.has(0)) fold.add(tag)
        return
      }
      const first = tag.value(0)
      switch (tag.name) {
        case 'base':
          // The first <base href> anywhere in the document is its base URL (HTML), resolved
          // against the document URL, when http(s). Every URL is resolved after the pass, so
          // elements met before the <base> follow it too.
          if (first !== undefined && !baseSeen) {
            baseSeen = true
            const url = absoluteHttp(decodeAttr(first), documentUrl.href)
            if (url !== null) base = new URL(url)
          }
          break
        case 'img':
          if (first !== undefined) asset(first)
          break
        case 'link':
          if (first !== undefined) meta.link(first, tag.value(1), asset)
          break
        case 'meta':
          meta.meta(first, tag.value(1), tag.value(2), tag.value(3))
          break
        case 'script':
          textWanted = meta.script(first, tag.value(1), asset)
          break
        case 'title':
          textWanted = meta.titleElement()
          break
      }
    },
    text(_name, from, to) {
      if (textWanted) meta.text(html.slice(from, to))
      textWanted = false
    },
  })

  const resolver = new Resolver(base)
  const navigators = passNeeded ? navigate(html, selectors) : selectors.map(navigatorWithoutPass)

  const assets = new Set<string>()
  for (const raw of assetRefs) {
    const url = resolver.resolve(raw)
    if (url !== null) assets.add(url)
  }
  const nofollow = meta.robotsNofollow
  const kept = (list: (LinkRecord | null)[]) => list.filter((r): r is LinkRecord => r !== null)
  const links = fold.records(resolver)
  // A navigator's own record holds the raw href until here.
  const resolved = (record: LinkRecord): LinkRecord | null => {
    const url = resolver.resolve(record.url)
    return url === null ? null : { ...record, url }
  }
  // A link element of the navigator's pass is the walk's link of the same index, whose text
  // follows the scan's rules. Should the two ever disagree on which elements are links (a page
  // HTMLRewriter reads otherwise), the pass's own record counts.
  const linkOf = (found: LinkRecord & { index?: number }): LinkRecord | null => {
    const walked = found.index === undefined ? undefined : fold.nth(found.index, found.url)
    return walked === undefined ? resolved(found) : walked
  }
  const all = linkOuts(links, nofollow)
  // The default navigator's anchors are all the links of a page without <area> links: the
  // same records, so the same LinkOuts (steps and navigators only read them).
  const anchors = (): LinkOut[] =>
    links.some((r) => r.area)
      ? linkOuts(
          links.filter((r) => !r.area),
          nofollow,
        )
      : all
  return {
    base_url: base.href,
    links: all,
    metadata: meta.metadata(resolver),
    assets: [...assets],
    robots_nofollow: nofollow,
    selected: navigators.map((found) => {
      if (found === undefined) return undefined
      if (found === 'anchors') return anchors()
      return linkOuts(kept(found.map(linkOf)), nofollow)
    }),
  }
}

/** What a navigator selector gives when no HTMLRewriter pass runs: the scan's anchors, or nothing it can run. */
const navigatorWithoutPass = (selector: string): 'anchors' | undefined => (anchorsOnly(selector) ? 'anchors' : undefined)

/** One HTMLRewriter pass for the navigator selectors: what each one matches (undefined when it cannot run). */
function navigate(html: string, selectors: readonly string[]): (Found | 'anchors' | undefined)[] {
  const rewriter = new HTMLRewriter()
  let links = 0
  // Registered before the navigators' handlers: a link element they meet is the last one counted.
  rewriter.on('a[href], area[href]', { element: () => void links++ })
  const navigators = selectors.map((selector) => navigator(rewriter, selector, () => links))
  rewriter.transform(html)
  return navigators
}

const anchorsOnly = (selector: string) => ANCHORS_ONLY.test(selector.trim())

/** Adds the handlers of one navigator selector; undefined when HTMLRewriter cannot run it. */
function navigator(rewriter: HTMLRewriter, selector: string, links: () => number): Found | 'anchors' | undefined {
  if (anchorsOnly(selector) || !rewriterSupports(selector)) return navigatorWithoutPass(selector)
  const found: Found = []
  const sink = sinkRecord()
  let current = sink
  rewriter.on(selector, {
    element: (el) => {
      const tag = el.tagName
      const href = el.getAttribute('href')
      sink.text = ''
      if (href === null) {
        current = sink
        return
      }
      // The raw href: resolved after the pass, against the document's base wherever it is.
      // Registered after the counting handler: a link element met here is the last one counted.
      const index = tag === 'a' || tag === 'area' ? links() - 1 : undefined
      const record = { url: href, rel: el.getAttribute('rel'), text: '', alt: '', area: tag === 'area', index }
      found.push(record)
      current = record
    },
    text: (chunk) => void (current.text += chunk.text),
  })
  return found
}

const supported = new Map<string, boolean>()

/** Whether HTMLRewriter accepts `selector` (it lacks :has(), pseudo-elements and more). */
export function rewriterSupports(selector: string): boolean {
  let ok = supported.get(selector)
  if (ok !== undefined) return ok
  try {
    new HTMLRewriter().on(selector, {})
    ok = true
  } catch {
    ok = false
  }
  // Selectors come from stored pipelines: few and repeated. The cap only guards odd callers.
  if (supported.size >= 1000) supported.clear()
  supported.set(selector, ok)
  return ok
}
