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
import { attachMetadata, MetadataCollector, type Metadata } from './metadata'
import { htmlLang } from './start-tag'

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

// A navigator's finds: indexes of marked links, or records of other elements carrying href.
type Found = (number | LinkRecord)[]

/** What one pass gathers while HTMLRewriter runs; read by the handlers. */
type Pass = {
  documentUrl: URL
  base: URL
  baseSeen: boolean
  marked: number
  // Raw src/href values of assets, in document order, each once; resolved after the pass.
  assetRefs: Set<string>
  meta: MetadataCollector
}

/** The handlers every scan has, for the pass `pass()` answers at each call. */
function scanHandlers(rewriter: HTMLRewriter, pass: () => Pass): HTMLRewriter {
  rewriter
    .on('base[href]', {
      // The first <base href> anywhere in the document is its base URL (HTML), resolved against
      // the document URL, when http(s). Every URL is resolved after the pass, so elements met
      // before the <base> follow it too.
      element: (el) => {
        const p = pass()
        if (p.baseSeen) return
        p.baseSeen = true
        const url = absoluteHttp(decodeAttr(el.getAttribute('href')!), p.documentUrl.href)
        if (url !== null) p.base = new URL(url)
      },
    })
    .on('a[href], area[href]', {
      element: (el) => {
        el.before(LINK_MARK)
        pass().marked++
      },
    })
    .on('img[src]', { element: (el) => void pass().assetRefs.add(el.getAttribute('src')!) })
  return attachMetadata(rewriter, () => pass().meta, (raw) => pass().assetRefs.add(raw))
}

// Scans without navigator selectors (every crawled page) share one rewriter: building the
// handlers and selectors anew cost tens of microseconds a page. transform() of a string runs
// to its end synchronously, so one pass at a time uses it.
let sharedPass: Pass | null = null
let shared: HTMLRewriter | null = null

/** Scans decoded HTML from `baseUrl` (absolute; throws TypeError otherwise). */
export async function scanHtml(html: string, baseUrl: string, opts: ScanOptions = {}): Promise<Scan> {
  const documentUrl = new URL(baseUrl)
  documentUrl.hash = ''
  const input = html.includes(LINK_MARK) ? html.replaceAll(LINK_MARK, '') : html
  const pass: Pass = { documentUrl, base: documentUrl, baseSeen: false, marked: 0, assetRefs: new Set(), meta: new MetadataCollector(htmlLang(input)) }

  let out: string
  let navigators: (Found | 'anchors' | undefined)[]
  const selectors = opts.navigators ?? []
  // Anchor navigators read the marked links and add no handler (the crawl's default navigator).
  if (selectors.every(anchorsOnly)) {
    shared ??= scanHandlers(new HTMLRewriter(), () => sharedPass!)
    sharedPass = pass
    try {
      out = shared.transform(input)
    } finally {
      sharedPass = null
    }
    navigators = selectors.map(() => 'anchors')
  } else {
    const rewriter = scanHandlers(new HTMLRewriter(), () => pass)
    navigators = selectors.map((selector) => navigate(rewriter, selector, () => pass.marked))
    out = rewriter.transform(input)
  }

  const resolver = new Resolver(pass.base)
  const records = readMarkedLinks(out, pass.marked, resolver)
  const assets = new Set<string>()
  for (const raw of pass.assetRefs) {
    const url = resolver.resolve(raw)
    if (url !== null) assets.add(url)
  }
  const meta = pass.meta
  const nofollow = meta.robotsNofollow
  const kept = (list: (LinkRecord | null)[]) => list.filter((r): r is LinkRecord => r !== null)
  // A navigator's own record holds the raw href until here.
  const resolved = (record: LinkRecord): LinkRecord | null => {
    const url = resolver.resolve(record.url)
    return url === null ? null : { ...record, url }
  }
  return {
    base_url: pass.base.href,
    links: linkOuts(kept(records), nofollow),
    metadata: meta.metadata(resolver),
    assets: [...assets],
    robots_nofollow: nofollow,
    selected: navigators.map((found) => {
      if (found === undefined) return undefined
      if (found === 'anchors') return linkOuts(kept(records).filter((r) => !r.area), nofollow)
      return linkOuts(kept(found.map((f) => (typeof f === 'number' ? (records[f] ?? null) : resolved(f)))), nofollow)
    }),
  }
}

const anchorsOnly = (selector: string) => ANCHORS_ONLY.test(selector.trim())

/** Adds the handlers of one navigator selector; undefined when HTMLRewriter cannot run it. */
function navigate(rewriter: HTMLRewriter, selector: string, marked: () => number): Found | 'anchors' | undefined {
  if (anchorsOnly(selector)) return 'anchors'
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
      sink.text = ''
      // The raw href: resolved after the pass, against the document's base wherever it is.
      current = href === null ? sink : { url: href, rel: el.getAttribute('rel'), text: '', alt: '', area: false }
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
