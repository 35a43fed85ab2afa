import { Type, type Static } from '@sinclair/typebox'
import { StringEnum } from '../core/schemas'

export const FIELD_TYPES = ['string', 'number', 'integer', 'boolean', 'url', 'date'] as const

/** A Field (docs/extract.md): what to extract from a document, for data maps, `fields` steps and scrape json. */
export const Field = Type.Recursive(
  (Self) =>
    Type.Object(
      {
        name: Type.String({ minLength: 1, maxLength: 128 }),
        selector: Type.String({ minLength: 1, maxLength: 1024, description: 'CSS selector' }),
        attr: Type.Optional(Type.String({ minLength: 1, maxLength: 128, default: 'text', description: '`text`, `html` or an attribute name' })),
        type: Type.Optional(StringEnum(FIELD_TYPES, { default: 'string', description: 'coercion of the value; one that does not coerce is reported in `errors`' })),
        multiple: Type.Optional(Type.Boolean({ default: false, description: 'an array of every match instead of the first match' })),
        fields: Type.Optional(Type.Array(Self, { minItems: 1, maxItems: 100, description: 'an object per matched element' })),
        required: Type.Optional(Type.Boolean({ default: false, description: 'no match (or no value) is reported in `errors`' })),
      },
      { additionalProperties: false },
    ),
  { $id: 'Field' },
)
export type Field = Static<typeof Field>

/** The fields of a data map, a `fields` step or a scrape `json` format. */
export const Fields = Type.Array(Field, { minItems: 1, maxItems: 100 })
