/**
 * The links of a page folded while the walk meets them, so that what a scan holds grows with
 * the distinct links of a page, not with its anchors: a page repeating the same hundred links
 * fifty thousand times held every start tag and record until the end, about 460 bytes each.
 *
 * linkOuts (links.ts) keeps, per URL, the first occurrence, the text of the first occurrence
 * that has text, and the rel of the first followable one. Each is "the first occurrence with
 * some property", so keeping, per raw href, its first occurrence, its first with text and its
 * first followable one, in document order, gives linkOuts what it would take from them all.
 * The fold is by raw href, not URL: the `<base>` that resolves them may come later, and one
 * raw href resolves to one URL whatever the base.
 */
import { tokens, type Resolver } from './html-values'
import { linkText, type LinkRecord } from './links'
import { anchorContent, type WalkedTag } from './tags'

/** A record with its place among the page's links. */
type Held = LinkRecord & { at: number }

/** What is kept of one raw href (anchors and areas apart: the anchors navigator reads anchors only). */
type Entry = {
  area: boolean
  /** Its first occurrence, `url` the raw href until `records` resolves a copy. */
  first: Held
  /** The first later occurrence with text, when the first has none. */
  text?: Held
  /** The first later followable occurrence, when the first is nofollow. */
  follow?: Held
  /** Whether a later occurrence can no longer change what is kept; set on the first repeat. */
  textDone: boolean
  followDone: boolean
  checked: boolean
}

/**
 * Folds the a[href] and area[href] start tags of `s` (read with LINK_ATTRIBUTES), met in
 * document order. With `keepEvery`, nothing is folded: each link is its own entry, found again
 * by its index among the links (`nth`), which a navigator pass of HTMLRewriter reads them by.
 */
export class LinkFold {
  // Entries by the hash of their href: a repeated link is found without slicing its href.
  private readonly byHash = new Map<number, Entry>()
  // Entries whose hash an earlier href had, by href (an area's marked): they are sliced to be
  // found. Chaining them instead would let a page of hrefs made to collide (the hash is not
  // secret) cost a comparison with every earlier one.
  private readonly byHref = new Map<string, Entry>()
  private readonly entries: Entry[] = []
  // The last anchor kept, whose text runs to its end tag or to the next link, not met yet;
  // with its entry when it is a repeat that may give the entry its text.
  private pending: { record: Held; end: number; entry?: Entry } | null = null
  private count = 0
  private repeats = false
  // With keepEvery: the resolved record of each link, by index (null when not http(s)).
  private byIndex: (LinkRecord | null)[] = []

  constructor(
    private readonly s: string,
    private readonly keepEvery = false,
  ) {}

  add(tag: WalkedTag): void {
    this.settle(tag.at)
    const at = this.count++
    const area = tag.name === 'area'
    if (this.keepEvery) {
      this.added(tag, area, at)
      return
    }
    const hash = tag.hash(0)
    const hashed = this.byHash.get(hash)
    const own = hashed !== undefined && hashed.area === area && tag.valueIs(0, hashed.first.url)
    const key = hashed === undefined || own ? '' : (area ? '\u0000' : '') + tag.value(0)!
    const entry = own ? hashed : key ? this.byHref.get(key) : undefined
    if (!entry) {
      const added = this.added(tag, area, at)
      if (key) this.byHref.set(key, added)
      else this.byHash.set(hash, added)
      return
    }
    if (!entry.checked) {
      entry.checked = true
      entry.textDone = linkText(entry.first) !== ''
      entry.followDone = !nofollow(entry.first.rel)
    }
    if (entry.textDone && entry.followDone) return
    const record = this.held(tag, area, at)
    if (!entry.followDone && !nofollow(record.rel)) {
      entry.follow = record
      entry.followDone = true
      this.repeats = true
    }
    if (entry.textDone) {
      // Kept for its rel alone: an earlier occurrence has the text, so its own is never read.
      return
    }
    if (area) this.textFrom(entry, record)
    else this.pending = { record, end: tag.end, entry }
  }

  /** The kept records in document order, URLs resolved; those that are not http(s) dropped. */
  records(resolver: Resolver): LinkRecord[] {
    this.settle(this.s.length)
    const held: Held[] = []
    this.byIndex = []
    for (const entry of this.entries) {
      const url = resolver.resolve(entry.first.url)
      if (url === null) {
        if (this.keepEvery) this.byIndex.push(null)
        continue
      }
      const first = { ...entry.first, url }
      if (this.keepEvery) this.byIndex.push(first)
      held.push(first)
      if (entry.text) held.push({ ...entry.text, url })
      if (entry.follow && entry.follow !== entry.text) held.push({ ...entry.follow, url })
    }
    if (this.repeats) held.sort((a, b) => a.at - b.at)
    return held
  }

  /**
   * With keepEvery, after `records`: the record of the link of this index (null when not
   * http(s)), if its raw href is `href`; undefined when it is not, or there is no such link.
   */
  nth(index: number, href: string): LinkRecord | null | undefined {
    return this.entries[index]?.first.url === href ? this.byIndex[index] : undefined
  }

  /** A new entry for the link `tag`, its first occurrence; an anchor's text is read when the next link is met. */
  private added(tag: WalkedTag, area: boolean, at: number): Entry {
    const first = this.held(tag, area, at)
    const entry: Entry = { area, first, textDone: false, followDone: false, checked: false }
    this.entries.push(entry)
    if (!area) this.pending = { record: first, end: tag.end }
    return entry
  }

  /** Gives the pending anchor its text, which runs to `to` at most. */
  private settle(to: number): void {
    const p = this.pending
    if (!p) return
    this.pending = null
    const content = anchorContent(this.s, p.end, to)
    p.record.text = content.text
    p.record.alt = content.alt
    if (p.entry) this.textFrom(p.entry, p.record)
  }

  /** A repeat of `entry` with its text read: the entry's text when it is the first with any. */
  private textFrom(entry: Entry, record: Held): void {
    if (entry.textDone || linkText(record) === '') return
    entry.text = record
    entry.textDone = true
    this.repeats = true
  }

  /** A record of the link `tag`; an anchor's text is read when the next link is met. */
  private held(tag: WalkedTag, area: boolean, at: number): Held {
    return { url: tag.value(0)!, rel: tag.value(1) ?? null, text: '', alt: area ? (tag.value(2) ?? '') : '', area, at }
  }
}

const nofollow = (rel: string | null) => tokens(rel).includes('nofollow')
