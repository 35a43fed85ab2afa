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

/** A raw attribute value as the scan read it; undefined when the tag does not have it. */
type Raw = string | undefined

/**
 * Collects metadata: the scan gives it the tags it meets (their raw attribute values) and the
 * text of the title and script elements it asks for; `metadata()` answers after the pass.
 */
export class MetadataCollector {
  /** True when `<meta name="robots">` says nofollow or none. */
  robotsNofollow = false
  private title = ''
  private titleSeen = false
  private description: string | null = null
  // Raw hrefs of every <link rel=canonical>, resolved after the pass: a <base> may come later.
  private readonly canonicals: string[] = []
  private contentLanguage: string | null = null
  private readonly openGraph: Record<string, string> = {}
  private readonly jsonLd: string[] = []
  private textOf: 'title' | 'json_ld' | null = null

  /** `lang` is the raw `lang` of the `<html>` tag, which the scan reads from the source. */
  constructor(private readonly htmlLang: string | null) {}

  /** A `<title>`; answers whether its text is wanted (then given to `text`). */
  titleElement(): boolean {
    // Only the first <title> counts, even when empty. (An SVG <title> before the document's
    // own would be taken: the scan does not follow foreign content, tags.ts says why.)
    this.textOf = this.titleSeen ? null : 'title'
    this.titleSeen = true
    return this.textOf !== null
  }

  link(href: string, rel: Raw, asset: (raw: string) => void): void {
    const relTokens = tokens(rel ?? null)
    if (relTokens.includes('canonical')) this.canonicals.push(href)
    if (relTokens.includes('stylesheet')) asset(href)
  }

  /** A `<script>`; answers whether its text is wanted (JSON-LD, then given to `text`). */
  script(src: Raw, type: Raw, asset: (raw: string) => void): boolean {
    if (src !== undefined) asset(src)
    this.textOf = type !== undefined && type.split(';')[0]!.trim().toLowerCase() === 'application/ld+json' ? 'json_ld' : null
    return this.textOf !== null
  }

  /** The whole text of the title or script element just given, when it answered true. */
  text(text: string): void {
    // Script text is raw text in HTML: no character references to decode (the title's are, later).
    if (this.textOf === 'title') this.title = text
    else if (this.textOf === 'json_ld') this.jsonLd.push(text)
    this.textOf = null
  }

  // One <meta> may serve two purposes: <meta name="description" property="og:description">.
  meta(rawProperty: Raw, rawName: Raw, rawContent: Raw, httpEquiv: Raw): void {
    const property = rawProperty?.trim().toLowerCase()
    const name = rawName?.trim().toLowerCase()
    const content = () => attrOrNull(rawContent)
    // Open Graph belongs in property; some pages put it in name.
    const og = property?.startsWith('og:') ? property : name?.startsWith('og:') ? name : undefined
    if (og !== undefined && !(og in this.openGraph)) {
      const value = content()
      if (value !== null) this.openGraph[og] = value
    }
    if (name === 'description') this.description ??= content()
    else if (name === 'robots') {
      const directives = (rawContent ?? '').toLowerCase().split(/[\s,]+/)
      if (directives.includes('nofollow') || directives.includes('none')) this.robotsNofollow = true
    } else if (name === undefined && httpEquiv?.trim().toLowerCase() === 'content-language') {
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
