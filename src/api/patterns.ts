import { Type } from '@sinclair/typebox'
import { checkPatternDef, MAX_PATTERN_LENGTH, MAX_PATTERNS, PATTERN_FORMATS, resolvePath } from '../extract/patterns'
import { ApiError, notFound, type FieldErrors } from '../http/errors'
import { itemsMust, route, type Route } from '../http/route'
import { DateTime, Hash, PageQuery, PER_PAGE_DEFAULT, QueryArray, StringEnum, Uuid } from '../http/schemas'
import { CATEGORIES, Category } from '../parse/pipeline-schema'
import { ParseTimeout, PoolError } from '../parse/pool'
import type { Deps } from './deps'
import { CreatedFilters, HostFilters, IdFilters } from './filters'
import { afterOf, pageBody } from './paging'
import { HostRef, PageOf } from './shapes'

const closed = { additionalProperties: false } as const
const Pattern = Type.String({ minLength: 1, maxLength: MAX_PATTERN_LENGTH })
const Patterns = Type.Array(Pattern, { minItems: 1, maxItems: MAX_PATTERNS })
/** A pattern definition, tagged by `format`. */
export const PatternDefinition = Type.Union([
  Type.Object({ format: Type.Literal('regex', { description: 'RE2 regular expressions, searched anywhere in the absolute URL' }), patterns: Patterns }, closed),
  Type.Object({ format: Type.Literal('url_pattern', { description: 'URLPatterns: `/path/:id` matches the path, anything else is a full URL pattern' }), patterns: Patterns }, closed),
])
export const PatternSetShape = Type.Object({ id: Uuid, category: Category, patterns: PatternDefinition, host: HostRef, created_at: DateTime })
const MatchResult = Type.Object({
  path: Type.String(),
  url: Type.String({ description: 'the absolute URL the path resolved to, as matched' }),
  matched: Type.Boolean(),
  patterns: Type.Array(Type.String(), { description: 'the patterns that matched, in definition order' }),
  category: Type.Union([Category, Type.Null()], { description: "the set's category when any pattern matched" }),
})

const HostParams = Type.Object({ host_hash: Hash })
const SetParams = Type.Object({ patterns_id: Uuid })
// QueryArray is typed for string items; an enum of strings parses and validates the same way.
const SetFilters = {
  ...PageQuery,
  ...IdFilters,
  categories: Type.Optional(QueryArray(StringEnum(CATEGORIES))),
  formats: Type.Optional(QueryArray(StringEnum(PATTERN_FORMATS))),
  ...CreatedFilters,
}
const refine = (body: unknown, errors: FieldErrors) => checkPatternDef((body as { patterns?: unknown }).patterns, 'patterns', errors)

/** Pattern sets: per-host categories by regex or URLPattern, and a route to try them on paths. */
export const patternRoutes = ({ store, parser }: Deps): Route[] => [
  route({
    method: 'GET',
    path: '/v1/patterns',
    summary: 'List pattern sets, newest first',
    tag: 'patterns',
    query: Type.Object({ ...SetFilters, ...HostFilters }, closed),
    response: { status: 200, schema: PageOf(PatternSetShape) },
    handle: async ({ tenant, query }) => ({ status: 200, body: pageBody(await store.patterns.list(tenant, query, afterOf(query.page), query.per_page ?? PER_PAGE_DEFAULT)) }),
  }),
  route({
    method: 'GET',
    path: '/v1/hosts/:host_hash/patterns',
    summary: 'List the pattern sets of a host, newest first',
    tag: 'patterns',
    params: HostParams,
    query: Type.Object(SetFilters, closed),
    response: { status: 200, schema: PageOf(PatternSetShape) },
    handle: async ({ tenant, params, query }) => {
      const page = await store.patterns.listOfHost(tenant, params.host_hash, query, afterOf(query.page), query.per_page ?? PER_PAGE_DEFAULT)
      if (!page) throw notFound('host')
      return { status: 200, body: pageBody(page) }
    },
  }),
  route({
    method: 'POST',
    path: '/v1/hosts/:host_hash/patterns',
    summary: 'Create a pattern set for a host of the catalogue',
    tag: 'patterns',
    params: HostParams,
    body: Type.Object({ category: Category, patterns: PatternDefinition, id: Type.Optional(Uuid) }, closed),
    refine,
    response: { status: 201, schema: PatternSetShape },
    handle: async ({ tenant, params, body }) => {
      const set = await store.patterns.create(tenant, params.host_hash, { id: body.id ?? crypto.randomUUID(), category: body.category, patterns: body.patterns })
      if (!set) throw notFound('host')
      return { status: 201, body: set }
    },
  }),
  route({
    method: 'GET',
    path: '/v1/patterns/:patterns_id',
    summary: 'Get a pattern set',
    tag: 'patterns',
    params: SetParams,
    response: { status: 200, schema: PatternSetShape },
    handle: async ({ tenant, params }) => {
      const set = await store.patterns.get(tenant, params.patterns_id)
      if (!set) throw notFound('pattern set')
      return { status: 200, body: set }
    },
  }),
  route({
    method: 'PUT',
    path: '/v1/patterns/:patterns_id',
    summary: "Replace a pattern set's definition (the category and host stay)",
    tag: 'patterns',
    params: SetParams,
    body: Type.Object({ patterns: PatternDefinition }, closed),
    refine,
    response: { status: 200, schema: PatternSetShape },
    handle: async ({ tenant, params, body }) => {
      const set = await store.patterns.replace(tenant, params.patterns_id, body.patterns)
      if (!set) throw notFound('pattern set')
      return { status: 200, body: set }
    },
  }),
  route({
    method: 'DELETE',
    path: '/v1/patterns/:patterns_id',
    summary: 'Delete a pattern set',
    tag: 'patterns',
    params: SetParams,
    response: { status: 204, description: 'deleted' },
    handle: async ({ tenant, params }) => {
      if (!(await store.patterns.delete(tenant, params.patterns_id))) throw notFound('pattern set')
      return { status: 204 }
    },
  }),
  route({
    method: 'POST',
    path: '/v1/patterns/:patterns_id/match',
    summary: "Test paths against a pattern set (relative paths resolve against the set's host)",
    tag: 'patterns',
    params: SetParams,
    body: Type.Object({ paths: Type.Array(Type.String({ minLength: 1, maxLength: 8192 }), { minItems: 1, maxItems: 255 }) }, closed),
    // Whether a path resolves to an http(s) URL does not depend on which host it resolves against.
    refine: itemsMust('paths', (raw) => resolvePath(raw, 'example.com'), 'must be a path or an absolute http(s) URL'),
    response: { status: 200, schema: Type.Object({ results: Type.Array(MatchResult) }) },
    handle: async ({ tenant, params, body }) => {
      const set = await store.patterns.get(tenant, params.patterns_id)
      if (!set) throw notFound('pattern set')
      // On a parse worker: a set at its size budget can take seconds over long paths.
      const { category, patterns, host } = set
      try {
        return { status: 200, body: { results: await parser.match({ set: { category, patterns, host }, paths: body.paths }, tenant) } }
      } catch (err) {
        if (err instanceof ParseTimeout) throw new ApiError(500, 'timeout', err.message)
        if (err instanceof PoolError) throw new ApiError(500, 'internal', err.message)
        throw err
      }
    },
  }),
]
