/**
 * Links as the scan sees them (one record per element) and as steps return them (LinkOut,
 * one per URL). Records stay raw during the pass; text is decoded only for the URLs kept.
 */
import { collapse, decodeAttr, decodeText, splitTokens, tokens } from './html-values'

/** A link a parse step returns (links step, navigator output). */
export type LinkOut = {
  /** Absolute http(s) URL, fragment dropped; one entry per URL. */
  url: string
  /** Anchor text, entities decoded, whitespace collapsed; image alt text when there is none. */
  text: string
  /** Tokens of rel, lowercased. */
  rel: string[]
  nofollow: boolean
}

/** One linking element met during the pass; `text` and `alt` gather raw source text. */
export type LinkRecord = { url: string; rel: string | null; text: string; alt: string; area: boolean }

/** A record nobody reads: text of elements whose link was dropped is written here. */
export const sinkRecord = (): LinkRecord => ({ url: '', rel: null, text: '', alt: '', area: false })

/** What the scan reads of a link's start tag, in this order. */
export const LINK_ATTRIBUTES: readonly string[] = ['href', 'rel', 'alt']

/**
 * Records to LinkOut, deduplicated by URL in order of first appearance. The first occurrence
 * wins, with two exceptions: its text is taken from the first later occurrence that has text
 * when it has none (an image link followed by the same link in words), and a later followable
 * occurrence makes the link followable (rel taken from that occurrence, so rel and nofollow
 * agree). `allNofollow` is a robots meta nofollow: every link is nofollow.
 */
export function linkOuts(records: readonly LinkRecord[], allNofollow: boolean): LinkOut[] {
  return deduplicated(records, allNofollow, linkText, (record) => tokens(record.rel))
}

/**
 * A link found by other means than the scan (the navigator's tree fallback), its values
 * already decoded: `url` absolute http(s) without fragment, `rel` the attribute as is, `text`
 * the element's text, `alt` the alt text of its images (used when `text` is empty).
 */
export type LinkSource = { url: string; rel: string | null; text: string; alt?: string }

/** LinkSources to LinkOut by the rules of `linkOuts`: one per URL, text collapsed, rel tokens once. */
export function linkOutsFrom(records: readonly LinkSource[], robotsNofollow: boolean): LinkOut[] {
  return deduplicated(
    records,
    robotsNofollow,
    (r) => collapse(r.text) || collapse(r.alt ?? ''),
    (r) => splitTokens(r.rel),
  )
}

function deduplicated<R extends { url: string }>(records: readonly R[], allNofollow: boolean, textOf: (record: R) => string, relOf: (record: R) => string[]): LinkOut[] {
  const byUrl = new Map<string, LinkOut>()
  for (const record of records) {
    const seen = byUrl.get(record.url)
    if (seen && seen.text && !seen.nofollow) continue
    const rel = relOf(record)
    const nofollow = allNofollow || rel.includes('nofollow')
    if (!seen) {
      byUrl.set(record.url, { url: record.url, text: textOf(record), rel, nofollow })
      continue
    }
    if (!seen.text) seen.text = textOf(record)
    if (seen.nofollow && !nofollow) {
      seen.rel = rel
      seen.nofollow = false
    }
  }
  return [...byUrl.values()]
}

/** A record's text as a LinkOut has it: decoded, collapsed, the alt text when there is none. */
export function linkText(record: LinkRecord): string {
  const text = record.text ? collapse(decodeText(record.text)) : ''
  if (text || !record.alt) return text
  return collapse(decodeAttr(record.alt))
}
