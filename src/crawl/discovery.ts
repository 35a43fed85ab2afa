import { categorize } from '../extract/patterns'
import type { ParseContext, ParseResult } from '../parse/pipeline'
import { ASSET, PAGE, type Claimed, type FrontierEntry } from '../store/frontier'
import { BoundedCache } from '../util/bounded-cache'
import type { CrawlConfig } from './manifest'
import type { Scope } from './scope'
import { hostPortOf, linkHash, normalizeUrl } from '../core/url'

const SEEN = 2
const CATALOGED = 1
const LINK_CACHE_SIZE = 50_000

/** A link as the run sees it; `host` is its politeness key (host and port). */
/** `seen`: known to be in the frontier; `page`: the last page (a count) that linked to it. */
type ChildLink = { url: string; hash: string; host: string; inScope: boolean; seen: boolean; page: number }

/**
 * What one page's links come to: URLs to queue, the in-scope children (edges), URLs that need a
 * catalogue row, and whether max_depth kept an unseen one unqueued.
 */
export type Found = { next: FrontierEntry[]; children: string[]; uncataloged: string[]; depthCut: boolean }

/**
 * The run's seen set and link discovery (design.md §5): which URLs the run has met, what a page's
 * links resolve to, which of them are in scope, at what depth they are queued.
 */
export class Discovery {
  /**
   * Link hashes this execution knows: SEEN ones are in the run's frontier, CATALOGED ones only
   * have catalogue rows (most links of a site are repeats). One map, one key string per URL.
   */
  private readonly known = new Map<string, typeof SEEN | typeof CATALOGED>()
  /**
   * A link as parsed → its normalized URL, hash and whether the run's scope takes it; null for
   * no URL. Most links of a site are repeats (design.md, measured fact 13), so this saves a URL
   * parse, a hash and the scope tests for about nineteen of a page's twenty links.
   */
  private readonly linkCache = new BoundedCache<ChildLink | null>(LINK_CACHE_SIZE)
  /** Pages whose links were found, counted: a page's stamp on the memo entries it met. */
  private pages = 0

  constructor(
    private readonly cfg: Required<CrawlConfig>,
    private readonly scope: Scope,
    private readonly ctx: ParseContext,
  ) {}

  /** A resumed execution: every hash already in the frontier. */
  seen(hashes: Iterable<string>) {
    for (const h of hashes) this.known.set(h, SEEN)
  }

  isSeen(hash: string): boolean {
    return this.known.get(hash) === SEEN
  }

  /**
   * isSeen for a memoized link: a URL seen stays seen, so the memo remembers a yes and the seen
   * set is asked only until then (most of a page's links were seen on earlier pages).
   */
  private linkSeen(link: ChildLink): boolean {
    return link.seen || (link.seen = this.isSeen(link.hash))
  }

  entry(url: string, depth: number, parent: string | null, kind: number, hash = linkHash(url)): FrontierEntry {
    return { hash, url, host: hostPortOf(url), depth, parent, kind }
  }

  /**
   * The unseen ones of `entries`, now marked seen, and the URLs among them that had no catalogue
   * row yet as far as this execution knows.
   */
  fresh(entries: FrontierEntry[]): { fresh: FrontierEntry[]; uncataloged: string[] } {
    const uncataloged: string[] = []
    const fresh: FrontierEntry[] = []
    for (const e of entries) {
      const state = this.known.get(e.hash)
      if (state === SEEN) continue
      if (state === undefined) uncataloged.push(e.url)
      this.known.set(e.hash, SEEN)
      fresh.push(e)
    }
    return { fresh, uncataloged }
  }

  /**
   * Marks a URL seen that was fetched without being queued (a redirect's target or hop): true when
   * it was new, with whether it needs a catalogue row; false when it was known (queued already).
   */
  markFetched(hash: string): { added: boolean; cataloged: boolean } {
    const state = this.known.get(hash)
    if (state === SEEN) return { added: false, cataloged: true }
    this.known.set(hash, SEEN)
    return { added: true, cataloged: state === CATALOGED }
  }

  private childLink(raw: string): ChildLink | null {
    return this.linkCache.get(raw, (key) => {
      const url = normalizeUrl(key)
      // Most links are written normalized already: the key then holds the URL for both.
      if (url === null) return null
      const own = url === key ? key : url
      return { url: own, hash: linkHash(own), host: hostPortOf(own), inScope: !this.scope.whyOut(own) && this.inCategories(own), seen: false, page: 0 }
    })
  }

  /** Links of the pipelines' navigators: the in-scope children (edges), the ones to queue, canonical and assets. */
  found(c: Claimed, parsed: ParseResult): Found {
    const maxDepth = this.cfg.limits.max_depth!
    const children = this.children(c, parsed)
    const next: FrontierEntry[] = []
    const hashes: string[] = []
    const uncataloged: string[] = []
    const depth = c.depth + 1
    let depthCut = false
    for (const { link, follow } of children) {
      hashes.push(link.hash)
      if (follow && depth <= maxDepth) {
        // Most children are known already: only the new ones become frontier entries.
        if (!this.linkSeen(link)) next.push({ hash: link.hash, url: link.url, host: link.host, depth, parent: c.hash, kind: PAGE })
      } else {
        if (follow && !this.linkSeen(link)) depthCut = true
        // Edges name their child's catalogue row: depth-cut and nofollow children get theirs here.
        if (!this.known.has(link.hash)) {
          this.known.set(link.hash, CATALOGED)
          uncataloged.push(link.url)
        }
      }
    }
    // rel=canonical: the same content under its own name, at this page's depth.
    for (const p of parsed.pipelines) {
      for (const step of p.steps) {
        if (step.kind !== 'metadata' || !step.metadata.canonical) continue
        const canonical = normalizeUrl(step.metadata.canonical)
        if (canonical && canonical !== c.url && !this.scope.whyOut(canonical)) next.push(this.entry(canonical, c.depth, c.parent, PAGE))
      }
    }
    if (this.cfg.store.assets && parsed.assets) {
      for (const raw of parsed.assets) {
        const url = normalizeUrl(raw)
        if (url && !this.scope.whyOut(url)) next.push(this.entry(url, depth, c.hash, ASSET))
      }
    }
    return { next, children: hashes, uncataloged, depthCut }
  }

  /**
   * The in-scope links of a page's pipelines other than the page itself, one per normalized URL
   * in the order found; `follow`: one of them is not nofollow, or follow_nofollow is set.
   */
  private children(c: Claimed, parsed: ParseResult): { link: ChildLink; follow: boolean }[] {
    const followAll = this.cfg.scope.follow_nofollow === true
    const out: { link: ChildLink; follow: boolean }[] = []
    // Most links are written normalized: a link's memo entry is then its URL's, so a URL met
    // twice on this page meets its entry stamped with this page already. With no such repeat
    // and no URL normalized otherwise, the URLs are distinct and need no map (the usual page).
    const stamp = ++this.pages
    const clears = this.linkCache.clears
    let distinct = true
    for (const p of parsed.pipelines) {
      for (const raw of p.links ?? []) {
        const link = this.childLink(raw.url)
        if (!link || !link.inScope || link.url === c.url) continue
        if (link.url !== raw.url || link.page === stamp) distinct = false
        link.page = stamp
        out.push({ link, follow: !raw.nofollow || followAll })
      }
    }
    if (distinct && this.linkCache.clears === clears) return out
    const byUrl = new Map<string, { link: ChildLink; follow: boolean }>()
    for (const child of out) {
      const had = byUrl.get(child.link.url)
      if (had) had.follow ||= child.follow
      else byUrl.set(child.link.url, child)
    }
    return [...byUrl.values()]
  }

  /**
   * `scope.categories`: a discovered URL is followed only when its host's pattern sets put it in
   * one of them. Matching runs here, on compiled RE2 programs cached per set, each pattern within
   * the size budget every user regex has (decision 60).
   */
  private inCategories(url: string): boolean {
    const wanted = this.cfg.scope.categories ?? []
    if (!wanted.length) return true
    const category = categorize(url, this.ctx.patternSets(url))
    return category !== null && (wanted as string[]).includes(category)
  }
}
