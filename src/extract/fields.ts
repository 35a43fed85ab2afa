import type { HTMLElement } from 'node-html-parser'
import { coerce } from './coerce'
import type { Field } from './field-schema'
import { selectAll, selectFirst } from './select'
import { attrOf, htmlOf, textOf } from './tree'

/**
 * A value that could not be given, reported beside the data (never a silent null). `field` is
 * the path of the value: `price`, `author.name`, `comments[2].author`, `[3].price` in item lists.
 */
export type ExtractError = { field: string; error: 'required' | 'invalid'; message: string }
export type Extracted = { data: Record<string, unknown>; errors: ExtractError[] }

/**
 * Extracts `fields` from the document (or from one element, for nested fields and item
 * lists). `baseUrl` resolves `url` values; with NO_DOCUMENT_URL (coerce.ts) only absolute ones
 * are values and relative ones are errors. Selectors must have passed checkFields.
 */
export function extractFields(root: HTMLElement, fields: readonly Field[], baseUrl: string): Extracted {
  const errors: ExtractError[] = []
  return { data: extractObject(root, fields, baseUrl, '', errors), errors }
}

/** One object: a key per field, its value taken relative to `scope`. */
export function extractObject(scope: HTMLElement, fields: readonly Field[], baseUrl: string, prefix: string, errors: ExtractError[]): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  for (const field of fields) {
    const value = extractField(scope, field, baseUrl, prefix === '' ? field.name : `${prefix}.${field.name}`, errors)
    // defineProperty: a field may be named `__proto__`, which assignment would turn into a prototype.
    Object.defineProperty(out, field.name, { value, enumerable: true, writable: true, configurable: true })
  }
  return out
}

function extractField(scope: HTMLElement, field: Field, baseUrl: string, path: string, errors: ExtractError[]): unknown {
  const nested = field.fields
  if (nested) {
    if (field.multiple) {
      const objects = selectAll(scope, field.selector).map((el, i) => extractObject(el, nested, baseUrl, `${path}[${i}]`, errors))
      if (objects.length === 0 && field.required) errors.push(missing(path, field, null))
      return objects
    }
    const el = selectFirst(scope, field.selector)
    if (!el) {
      if (field.required) errors.push(missing(path, field, null))
      return null
    }
    return extractObject(el, nested, baseUrl, path, errors)
  }
  const attr = field.attr ?? 'text'
  const type = field.type ?? 'string'
  if (field.multiple) {
    const values: unknown[] = []
    // Matches without a value are left out; one that does not coerce stays as null at its index.
    for (const el of selectAll(scope, field.selector)) {
      const raw = valueOf(el, attr)
      if (raw === null) continue
      const c = coerce(raw, type, baseUrl)
      if (!c.ok) errors.push({ field: `${path}[${values.length}]`, error: 'invalid', message: c.message })
      values.push(c.ok ? c.value : null)
    }
    if (values.length === 0 && field.required) errors.push(missing(path, field, null))
    return values
  }
  // The first match decides, even when it has no value: `img[src]` asks for the first with one.
  const el = selectFirst(scope, field.selector)
  const raw = el ? valueOf(el, attr) : null
  if (raw === null) {
    if (field.required) errors.push(missing(path, field, el))
    return null
  }
  const c = coerce(raw, type, baseUrl)
  if (c.ok) return c.value
  errors.push({ field: path, error: 'invalid', message: c.message })
  return null
}

/** The raw value an element gives for `attr`; null when it gives none (missing attribute, or empty). */
function valueOf(el: HTMLElement, attr: string): string | null {
  const value = attr === 'text' ? textOf(el) : attr === 'html' ? htmlOf(el) : attrOf(el, attr)?.trim()
  return value === undefined || value.trim() === '' ? null : value
}

function missing(path: string, field: Field, el: HTMLElement | null): ExtractError {
  const selector = JSON.stringify(field.selector)
  if (!el) return { field: path, error: 'required', message: `no element matches ${selector}` }
  const attr = field.attr ?? 'text'
  const what = attr === 'text' ? 'has no text' : attr === 'html' ? 'is empty' : `has no ${JSON.stringify(attr)} attribute value`
  return { field: path, error: 'required', message: `the first element matching ${selector} ${what}` }
}
