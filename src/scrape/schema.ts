import { Type, type Static } from '@sinclair/typebox'
import { Fields } from '../extract/field-schema'
import { checkFields } from '../extract/selectors'
import type { FieldErrors } from '../core/errors'
import { LinkOut, Metadata } from '../parse/result-schema'

/** The scrape request (SPEC "Scrape API") and its checks beyond the schema. */

const closed = { additionalProperties: false } as const

/** Bounds of `timeout_seconds` (and X-Scrape-Timeout-Seconds): how long the page may take to load. */
export const TIMEOUT_SECONDS = { min: 1, max: 120, default: 30 } as const
const MAX_FORMATS = 8

const MarkdownFormat = Type.Object(
  {
    kind: Type.Literal('markdown'),
    skip_tags: Type.Optional(
      Type.Array(Type.String({ minLength: 1, maxLength: 64, pattern: '^[A-Za-z][A-Za-z0-9-]*$', patternHint: 'a tag name' }), {
        maxItems: 64,
        description: 'HTML tags removed, with their content, before conversion',
      }),
    ),
    main_content: Type.Optional(Type.Boolean({ default: true, description: "the page's main content only: navigation, headers, footers, sidebars and cookie banners removed; false: the whole page" })),
  },
  closed,
)
const HtmlFormat = Type.Object({ kind: Type.Literal('html') }, { ...closed, description: 'the raw HTML after loading (and rendering, when `rendered`)' })
const JsonFormat = Type.Object({ kind: Type.Literal('json'), fields: Fields }, { ...closed, description: 'data extracted by `fields` (the Field syntax of data maps)' })
export const Format = Type.Union([MarkdownFormat, HtmlFormat, JsonFormat])
export type Format = Static<typeof Format>

export const ScrapeBody = Type.Object(
  {
    url: Type.String({ minLength: 1, maxLength: 8192, description: 'absolute http(s) URL' }),
    formats: Type.Optional(Type.Array(Format, { minItems: 1, maxItems: MAX_FORMATS, description: 'default: one markdown entry' })),
    proxy: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: "`isp`: the operator's proxy of that name (TRAWL_PROXIES); omitted: direct" })),
    timeout_seconds: Type.Optional(
      Type.Number({
        minimum: TIMEOUT_SECONDS.min,
        maximum: TIMEOUT_SECONDS.max,
        default: TIMEOUT_SECONDS.default,
        description: `seconds the page may take to load, ${TIMEOUT_SECONDS.min} to ${TIMEOUT_SECONDS.max}`,
      }),
    ),
    locale: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: 'a BCP 47 language tag, sent as Accept-Language' })),
  },
  closed,
)
export type ScrapeBody = Static<typeof ScrapeBody>

/** A scrape as the scraper takes it: validated, defaults applied. */
export type ScrapeRequest = { url: string; formats: Format[]; proxy: string | null; timeoutMs: number; locale: string | null }

export const Result = Type.Union([
  Type.Object({ kind: Type.Literal('markdown'), content: Type.String() }),
  Type.Object({ kind: Type.Literal('html'), content: Type.String() }),
  Type.Object({
    kind: Type.Literal('json'),
    data: Type.Record(Type.String(), Type.Unknown()),
    errors: Type.Array(Type.Object({ field: Type.String(), error: Type.String(), message: Type.String() }), { description: 'fields that were required and missing, or could not be coerced' }),
  }),
  Type.Object({ kind: Type.Literal('binary'), content: Type.String({ description: 'base64 of the raw bytes' }), content_type: Type.String() }),
])
export const ScrapeResponse = Type.Object({
  url: Type.String({ description: 'the URL fetched, after redirects' }),
  rendered: Type.Boolean({ description: 'whether Chromium loaded and rendered the page (TRAWL_SCRAPE_RENDER; with `auto`, only pages that need script to show their content)' }),
  status: Type.Integer({ description: "the target's HTTP status" }),
  metadata: Type.Union([Metadata, Type.Null()], {
    description: "the page's metadata (title, description, canonical, language, Open Graph, JSON-LD), as the parse metadata step gives it; null for content that is not HTML or text",
  }),
  links: Type.Union([Type.Array(LinkOut), Type.Null()], { description: "the page's links, as the parse links step gives them; null for content that is not HTML or text" }),
  results: Type.Array(Result, { description: 'one per requested format, in order; content that is not text or HTML is a binary entry for each' }),
})
export type ScrapeResult = Static<typeof ScrapeResponse>

/** Why `url` cannot be scraped as given, or null. */
export function urlProblem(url: string): string | null {
  const parsed = URL.parse(url)
  if (!parsed) return 'must be an absolute URL with its scheme'
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') return 'must be an http or https URL'
  if (!parsed.hostname) return 'must name a host'
  return null
}

/** Why `text` is not a page-load timeout in seconds (timeout_seconds, X-Scrape-Timeout-Seconds, --timeout), or null. */
export function timeoutProblem(text: string): string | null {
  const seconds = Number(text)
  return text.trim() !== '' && Number.isFinite(seconds) && seconds >= TIMEOUT_SECONDS.min && seconds <= TIMEOUT_SECONDS.max
    ? null
    : `must be a number of seconds from ${TIMEOUT_SECONDS.min} to ${TIMEOUT_SECONDS.max}`
}

/** Why `tag` is not a BCP 47 language tag, or null. */
export function localeProblem(tag: string): string | null {
  try {
    return Intl.getCanonicalLocales(tag).length === 1 ? null : 'must be one BCP 47 language tag, such as en-US'
  } catch {
    return 'must be a BCP 47 language tag, such as en-US or de'
  }
}

/** Why `name` is not a configured proxy, or null. */
export function proxyProblem(name: string, proxyNames: readonly string[]): string | null {
  return proxyNames.includes(name) ? null : `is not a configured proxy (TRAWL_PROXIES names: ${proxyNames.join(', ') || 'none'})`
}

/** The checks of a POST body a schema cannot make; the body's shape is not trusted. */
export function refineBody(body: unknown, errors: FieldErrors, proxyNames: readonly string[]) {
  const b = body as Record<string, unknown>
  if (typeof b.url === 'string' && b.url.length <= 8192) {
    const problem = urlProblem(b.url)
    if (problem) errors.add('url', problem)
  }
  if (typeof b.locale === 'string') {
    const problem = localeProblem(b.locale)
    if (problem) errors.add('locale', problem)
  }
  if (typeof b.proxy === 'string') {
    const problem = proxyProblem(b.proxy, proxyNames)
    if (problem) errors.add('proxy', problem)
  }
  if (Array.isArray(b.formats)) {
    b.formats.forEach((f, i) => {
      const format = f as { kind?: unknown; fields?: unknown }
      if (format && format.kind === 'json' && Array.isArray(format.fields)) checkFields(format.fields, `formats[${i}].fields`, errors)
    })
  }
}

/** Accept-Language for a locale: the tag, then its language alone (`de-CH,de;q=0.9`). */
export function acceptLanguage(locale: string): string {
  const tag = Intl.getCanonicalLocales(locale)[0]!
  const language = tag.split('-')[0]!
  return language === tag ? tag : `${tag},${language};q=0.9`
}
