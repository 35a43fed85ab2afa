// The schema below uses the `uri` format: whoever checks a config needs the formats registered.
import '../core/formats'
import { Type, type Static } from '@sinclair/typebox'
import { Value } from '@sinclair/typebox/value'
import { fetchOptions } from '../fetch/options-schema'
import { checkFetchOptions } from '../fetch/request-schema'
import { FieldErrors } from '../core/errors'
import { Duration, StringEnum } from '../core/schemas'
import { checkPipelines, checkRegexes } from '../parse/check'
import { Category, Pipeline, Regex } from '../parse/pipeline-schema'
import { parseDuration } from '../util/duration'
import { looseArray as arr, looseObject as obj } from '../util/loose'

const closed = { additionalProperties: false } as const
const Regexes = Type.Array(Regex, { maxItems: 100, default: [] })

/** A crawl follows a few redirects and retries a failed fetch twice; POST /v1/fetch does neither unless asked. */
export const CRAWL_FETCH_DEFAULTS = { max_redirects: 5, max_retries: 2 }

/** The crawl manifest: a job's `config` (design.md §4). Every default is here. */
export const CrawlConfig = Type.Object(
  {
    seeds: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 8192, format: 'uri' }), { maxItems: 10_000, default: [] })),
    sitemaps: Type.Optional(Type.Boolean({ default: false })),
    scope: Type.Optional(
      Type.Object(
        {
          domains: Type.Optional(StringEnum(['same_host', 'same_domain', 'any'], { default: 'same_host' })),
          include: Type.Optional(Regexes),
          exclude: Type.Optional(Regexes),
          categories: Type.Optional(Type.Array(Category, { maxItems: 6, default: [] })),
          follow_nofollow: Type.Optional(Type.Boolean({ default: false })),
        },
        { ...closed, default: {} },
      ),
    ),
    limits: Type.Optional(
      Type.Object(
        {
          max_depth: Type.Optional(Type.Integer({ minimum: 0, maximum: 1000, default: 3 })),
          max_urls: Type.Optional(Type.Integer({ minimum: 1, maximum: 100_000_000, default: 1000 })),
          max_empty_evaluations: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000, default: 60 })),
          max_age: Type.Optional({ ...Duration, default: '1h' }),
        },
        { ...closed, default: {} },
      ),
    ),
    politeness: Type.Optional(
      Type.Object(
        {
          concurrency: Type.Optional(Type.Integer({ minimum: 1, maximum: 256, default: 16 })),
          per_host_concurrency: Type.Optional(Type.Integer({ minimum: 1, maximum: 64, default: 2 })),
          delay: Type.Optional({ ...Duration, default: '0s' }),
          respect_robots: Type.Optional(Type.Boolean({ default: true })),
        },
        { ...closed, default: {} },
      ),
    ),
    fetch: Type.Optional(Type.Object(fetchOptions(CRAWL_FETCH_DEFAULTS), { ...closed, default: {} })),
    pipelines: Type.Optional(Type.Array(Pipeline, { maxItems: 32, default: [] })),
    store: Type.Optional(
      Type.Object(
        {
          raw: Type.Optional(Type.Boolean({ default: true })),
          parsed: Type.Optional(Type.Boolean({ default: true })),
          assets: Type.Optional(Type.Boolean({ default: false })),
          max_body_bytes: Type.Optional(Type.Integer({ minimum: 1024, maximum: 1_073_741_824, default: 10_485_760 })),
        },
        { ...closed, default: {} },
      ),
    ),
  },
  { ...closed, description: 'the crawl manifest (docs/api.md, "Job config: the crawl manifest")' },
)
export type CrawlConfig = Static<typeof CrawlConfig>

/** The configuration a run executes with: the job's config with every default filled in. */
export function resolveConfig(config: CrawlConfig): Required<CrawlConfig> {
  return Value.Default(CrawlConfig, structuredClone(config)) as Required<CrawlConfig>
}

/**
 * Checks a config for what a schema cannot say: regexes that RE2 rejects, duration bounds,
 * proxy names the operator has not configured. Runs beside schema validation on the raw input
 * (so one 422 lists everything), hence it trusts no shape. `at` prefixes field paths.
 */
export function checkConfig(config: unknown, at: string, proxyNames: readonly string[], errors = new FieldErrors()): FieldErrors {
  const c = obj(config)
  const scope = obj(c.scope)
  checkRegexes(scope.include, `${at}.scope.include`, errors)
  checkRegexes(scope.exclude, `${at}.scope.exclude`, errors)
  checkPipelines(c.pipelines, `${at}.pipelines`, errors)
  const bound = (value: unknown, path: string, min: number, max: number, words: string) => {
    const ms = typeof value === 'string' ? parseDuration(value) : null
    if (ms !== null && (ms < min || ms > max)) errors.add(path, `must be ${words}`)
  }
  checkFetchOptions(c.fetch, `${at}.fetch`, proxyNames, errors)
  bound(obj(c.limits).max_age, `${at}.limits.max_age`, 1_000, 365 * 86_400_000, 'between 1s and 365d')
  bound(obj(c.politeness).delay, `${at}.politeness.delay`, 0, 3_600_000, 'at most 1h')
  return errors
}
