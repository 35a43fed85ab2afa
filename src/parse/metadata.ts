/**
 * Document metadata gathered during the scan's pass over the tags: title, description,
 * canonical, language, Open Graph, JSON-LD, and the robots meta that makes every link nofollow.
 */
import { attrOrNull, collapse, decodeText, tokens, type Resolver } from './html-values'

/** What the metadata step returns (and a crawl records). */
export type Metadata = {
  title: string | null
  description: string | null
  /** Absolute http(s) URL of `<link rel="canonical">`, resolved like links. */
  canonical: string | null
  /** `<html lang>`, else `<meta http-equiv="content-language">`. */
  language: string | null
  /** Every `og:*` meta, keyed by its property name (lowercased); first non-empty value wins. */
  open_graph: Record<string, string>
  /** Parsed JSON of each application/ld+json script, in document order; invalid blocks skipped. */
  json_ld: unknown[]
}

/** The raw attribute values of a start tag, as the scan read them. */
export type Attributes = { getAttribute(name: string): string | null }

/** Collects metadata: the scan gives it the tags it meets, `metadata()` answers after the pass. */
export class MetadataCollector {
  /** True when `<meta name="robots">` says nofollow or none. */
  robotsNofollow = false
  private title = ''
  private titleSeen = false
  private inTitle = false
  private description: string | null = null
  // Raw hrefs of every <link rel=canonical>, resolved after the pass: a <base> may come later.
  private readonly canonicals: string[] = []
  private contentLanguage: string | null = null
  private readonly openGraph: Record<string, string> = {}
  private readonly jsonLd: string[] = []
  private inJsonLd = false

  /** `lang` is the raw `lang` of the `<html>` tag, which the scan reads from the source. */
  constructor(private readonly htmlLang: string | null) {}

  titleElement(): void {
    // Only the first <title> counts, even when empty. (An SVG <title> before the document's
    // own would be taken: the scan does not follow foreign content, tags.ts says why.)
    this.inTitle = !this.titleSeen
    this.titleSeen = true
  }

  titleText(text: string): void {
    if (this.inTitle) this.title += text
  }

  link(el: Attributes, asset: (raw: string) => void): void {
    const rel = tokens(el.getAttribute('rel'))
    if (rel.includes('canonical')) this.canonicals.push(el.getAttribute('href')!)
    if (rel.includes('stylesheet')) asset(el.getAttribute('href')!)
  }

  script(el: Attributes, asset: (raw: string) => void): void {
    const src = el.getAttribute('src')
    if (src !== null) asset(src)
    const type = el.getAttribute('type')
    this.inJsonLd = type !== null && type.split(';')[0]!.trim().toLowerCase() === 'application/ld+json'
    if (this.inJsonLd) this.jsonLd.push('')
  }

  // Script text is raw text in HTML: no character references to decode.
  scriptText(text: string): void {
    if (this.inJsonLd) this.jsonLd[this.jsonLd.length - 1] += text
  }

  // One <meta> may serve two purposes: <meta name="description" property="og:description">.
  meta(el: Attributes): void {
    const property = el.getAttribute('property')?.trim().toLowerCase()
    const name = el.getAttribute('name')?.trim().toLowerCase()
    const content = () => attrOrNull(el.getAttribute('content'))
    // Open Graph belongs in property; some pages put it in name.
    const og = property?.startsWith('og:') ? property : name?.startsWith('og:') ? name : undefined
    if (og !== undefined && !(og in this.openGraph)) {
      const value = content()
      if (value !== null) this.openGraph[og] = value
    }
    if (name === 'description') this.description ??= content()
    else if (name === 'robots') {
      const directives = (el.getAttribute('content') ?? '').toLowerCase().split(/[\s,]+/)
      if (directives.includes('nofollow') || directives.includes('none')) this.robotsNofollow = true
    } else if (name === undefined && el.getAttribute('http-equiv')?.trim().toLowerCase() === 'content-language') {
      this.contentLanguage ??= content()
    }
  }

  // The first canonical with an http(s) URL.
  private canonicalUrl(resolver: Resolver): string | null {
    for (const raw of this.canonicals) {
      const url = resolver.resolve(raw)
      if (url !== null) return url
    }
    return null
  }

  /** The metadata of the pass; `resolver` holds the document's base URL. */
  metadata(resolver: Resolver): Metadata {
    const json_ld: unknown[] = []
    for (const block of this.jsonLd) {
      try {
        json_ld.push(JSON.parse(block))
      } catch {
        // A broken block is the publisher's mistake; the other blocks still count.
      }
    }
    return {
      title: collapse(decodeText(this.title)) || null,
      description: this.description,
      canonical: this.canonicalUrl(resolver),
      language: attrOrNull(this.htmlLang) ?? this.contentLanguage,
      open_graph: this.openGraph,
      json_ld,
    }
  }
}
