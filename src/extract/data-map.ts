import { Type, type Static } from '@sinclair/typebox'
import type { HTMLElement } from 'node-html-parser'
import type { FieldErrors } from '../core/errors'
import { looseObject as obj } from '../util/loose'
import { Fields } from './field-schema'
import { extractObject, type ExtractError } from './fields'
import { selectAll } from './select'
import { checkFields, selectorProblem } from './selectors'

/** A data map definition (docs/extract.md, "Data maps"): fields, and with `item_selector` one object per matched item. */
export const DataMapDef = Type.Object(
  {
    fields: Fields,
    item_selector: Type.Optional(
      Type.String({ minLength: 1, maxLength: 1024, description: 'CSS selector; when given, the result is a list with one object per matched element and fields are relative to it' }),
    ),
  },
  { additionalProperties: false },
)
export type DataMapDef = Static<typeof DataMapDef>

/**
 * Applies a data map to a parsed document. With `item_selector` the data is a list (empty
 * when nothing matches) and error paths start with the item index: `[3].price`.
 */
export function applyDataMap(root: HTMLElement, map: DataMapDef, baseUrl: string): { data: Record<string, unknown> | Record<string, unknown>[]; errors: ExtractError[] } {
  const errors: ExtractError[] = []
  if (map.item_selector === undefined) return { data: extractObject(root, map.fields, baseUrl, '', errors), errors }
  const data = selectAll(root, map.item_selector).map((item, i) => extractObject(item, map.fields, baseUrl, `[${i}]`, errors))
  return { data, errors }
}

/** Checks a raw data map beside its schema: selectors (`at.item_selector`, `at.fields[i]…`) and field rules. */
export function checkDataMap(map: unknown, at: string, errors: FieldErrors): void {
  const def = obj(map)
  if (typeof def.item_selector === 'string') {
    const problem = selectorProblem(def.item_selector)
    if (problem) errors.add(`${at}.item_selector`, problem)
  }
  checkFields(def.fields, `${at}.fields`, errors)
}
