import { Type, type Static } from '@sinclair/typebox'
import { Fields } from '../extract/field-schema'
import { StringEnum, Uuid } from '../core/schemas'

export const CATEGORIES = ['articles', 'blogs', 'products', 'forums', 'sections', 'others'] as const
export const Category = StringEnum(CATEGORIES)

/** A user-supplied regular expression (RE2 syntax, compiled with re2js). */
export const Regex = Type.String({ minLength: 1, maxLength: 4096, description: 'RE2 regular expression' })
const Regexes = Type.Array(Regex, { maxItems: 100 })
const closed = { additionalProperties: false } as const

export const Guard = Type.Union([
  Type.Object({ kind: Type.Literal('content_type'), values: Type.Array(Type.String({ minLength: 1, maxLength: 255 }), { minItems: 1, maxItems: 32 }) }, closed),
  Type.Object({ kind: Type.Literal('url'), include: Type.Optional(Regexes), exclude: Type.Optional(Regexes) }, closed),
  Type.Object({ kind: Type.Literal('category'), categories: Type.Array(Category, { minItems: 1, maxItems: CATEGORIES.length }) }, closed),
])

export type Guard = Static<typeof Guard>

export const Navigator = Type.Object(
  {
    kind: Type.Literal('links'),
    selector: Type.Optional(Type.String({ minLength: 1, maxLength: 1024, default: 'a[href]' })),
    include: Type.Optional(Regexes),
    exclude: Type.Optional(Regexes),
  },
  closed,
)

export type Navigator = Static<typeof Navigator>

export const Step = Type.Union([
  Type.Object(
    {
      kind: Type.Literal('markdown'),
      skip_tags: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 64 }), { maxItems: 64 })),
      main_content: Type.Optional(Type.Boolean({ default: true, description: 'only the main content: navigation, headers, footers, sidebars and notices left out; false converts the whole body' })),
    },
    closed,
  ),
  Type.Object({ kind: Type.Literal('html') }, closed),
  Type.Object({ kind: Type.Literal('text') }, closed),
  Type.Object({ kind: Type.Literal('metadata') }, closed),
  Type.Object({ kind: Type.Literal('links') }, closed),
  Type.Object({ kind: Type.Literal('fields'), fields: Fields }, closed),
  Type.Object({ kind: Type.Literal('data_map'), id: Uuid }, closed),
])

export type Step = Static<typeof Step>

/** A parse pipeline object (SPEC; shapes from design.md §6). */
export const Pipeline = Type.Object(
  {
    identifier: Type.Optional(Type.String({ minLength: 1, maxLength: 128, default: 'default' })),
    guards: Type.Optional(Type.Array(Guard, { maxItems: 16, default: [] })),
    navigator: Type.Optional(Navigator),
    steps: Type.Optional(Type.Array(Step, { minItems: 1, maxItems: 16, default: [{ kind: 'markdown' }] })),
    priority: Type.Optional(Type.Integer({ minimum: -1000, maximum: 1000, default: 0 })),
    behavior: Type.Optional(StringEnum(['continue', 'stop'], { default: 'continue' })),
  },
  closed,
)
export type Pipeline = Static<typeof Pipeline>
