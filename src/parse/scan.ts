/**
 * One streaming HTMLRewriter pass over a document for everything that needs no tree: links,
 * metadata, assets and the links of navigator selectors. Steps that need a tree build one
 * elsewhere; this pass is the hot path of every crawled page.
 *
 * Speed: each selector costs time on every element of the page and each handler call costs
 * about a microsecond, so selectors are few and links are not read through handlers. The
 * rewriter only marks each a[href]/area[href] (HTMLRewriter knows where real elements are:
 * not in comments, scripts or attribute values); the marked tags and their text are then read
 * back from the output (links.ts).
 */
import { absoluteHttp, decodeAttr, Resolver } from './html-values'
import { LINK_MARK, linkOuts, readMarkedLinks, sinkRecord, type LinkOut, type LinkRecord } from './links'
import { MetadataCollector, type Metadata } from './metadata'
import { htmlLang } from './start-tag'

export type { LinkOut } from './links'
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
const ANCHORS_ONLY = /^\s*a\s*(\[\s*href\s*\])?\s*$/

// A navigator's finds: indexes of marked links, or records of other elements carrying href.
type Found = (number | LinkRecord)[]

/** Scans decoded HTML from `baseUrl` (absolute; throws TypeError otherwise). */
export async function scanHtml(html: string, baseUrl: string, opts: ScanOptions = {}): Promise<Scan> {
  const documentUrl = new URL(baseUrl)
  documentUrl.hash = ''
  const input = html.includes(LINK_MARK) ? html.replaceAll(LINK_MARK, '') : html
  let resolver = new Resolver(documentUrl)
  let base = documentUrl
  let baseSeen = false
  let marked = 0
  const assets = new Set<string>()
  const meta = new MetadataCollector(htmlLang(input))

  const rewriter = new HTMLRewriter()
    .on('base[href]', {
      // The first <base href> in the document is its base URL (HTML), resolved against the
      // document URL, for every link (marked links are resolved after the pass). Elements met
      // before it (rare: <base> belongs at the top of <head>) keep the document URL.
      element: (el) => {
        if (baseSeen) return
        baseSeen = true
        const url = absoluteHttp(decodeAttr(el.getAttribute('href')!), documentUrl.href)
        if (url === null) return
        resolver = new Resolver((base = new URL(url)))
      },
    })
    .on('a[href], area[href]', {
      element: (el) => {
        el.before(LINK_MARK)
        marked++
      },
    })
    .on('img[src]', {
      element: (el) => {
        const url = resolver.resolve(el.getAttribute('src')!)
        if (url !== null) assets.add(url)
      },
    })
  meta.attach(rewriter, () => resolver, (url) => assets.add(url))

  const navigators = (opts.navigators ?? []).map((selector) => navigate(rewriter, selector, () => resolver, () => marked))
  const out = rewriter.transform(input)

  const records = readMarkedLinks(out, marked, () => resolver)
  const nofollow = meta.robotsNofollow
  const kept = (list: (LinkRecord | null)[]) => list.filter((r): r is LinkRecord => r !== null)
  return {
    base_url: base.href,
    links: linkOuts(kept(records), nofollow),
    metadata: meta.metadata(),
    assets: [...assets],
    robots_nofollow: nofollow,
    selected: navigators.map((found) => {
      if (found === undefined) return undefined
      if (found === 'anchors') return linkOuts(kept(records).filter((r) => !r.area), nofollow)
      return linkOuts(kept(found.map((f) => (typeof f === 'number' ? (records[f] ?? null) : f))), nofollow)
    }),
  }
}

/** Adds the handlers of one navigator selector; undefined when HTMLRewriter cannot run it. */
function navigate(
  rewriter: HTMLRewriter,
  selector: string,
  resolver: () => Resolver,
  marked: () => number,
): Found | 'anchors' | undefined {
  if (ANCHORS_ONLY.test(selector)) return 'anchors'
  if (!rewriterSupports(selector)) return undefined
  const found: Found = []
  const sink = sinkRecord()
  let current = sink
  rewriter.on(selector, {
    // Registered after the marking handler: a link element met here is the last one marked.
    element: (el) => {
      const tag = el.tagName
      if ((tag === 'a' || tag === 'area') && el.hasAttribute('href')) {
        found.push(marked() - 1)
        current = sink
        return
      }
      const href = el.getAttribute('href')
      const url = href === null ? null : resolver().resolve(href)
      sink.text = ''
      current = url === null ? sink : { url, rel: el.getAttribute('rel'), text: '', alt: '', area: false }
      if (current !== sink) found.push(current)
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
