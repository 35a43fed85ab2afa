import { parse as parseCss, type Selector } from 'css-what'
import type { FieldErrors } from '../core/errors'
import { looseArray as arr, looseObject as obj } from '../util/loose'
import { compileCheck } from './select'

/** Nested `fields` deeper than this are refused: extraction and checks recurse once per level. */
export const MAX_FIELD_DEPTH = 8
/** Fields of one definition, counted over every level. */
export const MAX_FIELDS_TOTAL = 1000
const MAX_SELECTOR = 1024

// css-what takes any first character of a name (`p..a`, `a&b`, `a | b` all parse); CSS does not.
const NAME_START = /^[\w\-\u00b0-\uffff]/
const COMBINATORS: Record<string, string> = { child: '>', sibling: '~', adjacent: '+', parent: '<', 'column-combinator': '||', descendant: ' ' }

/** css-what and css-select messages, reworded for someone writing a selector. */
function reword(message: string): string {
  const name = /^Expected name, found (.*)$/s.exec(message)
  if (name) return `expected a name, found ${name[1] ? JSON.stringify(name[1]) : 'the end of the selector'}`
  const unmatched = /^Unmatched selector: (.*)$/s.exec(message)
  if (unmatched) return `unexpected ${JSON.stringify(unmatched[1])}`
  if (message.startsWith('Did not expect successive traversals')) return 'two combinators in a row'
  if (message === 'Empty sub-selector') return 'an empty selector (a stray comma or character)'
  if (message.startsWith("Attribute selector didn't terminate")) return 'an attribute selector is not closed with ]'
  if (message.startsWith('Pseudo-elements are not supported')) return 'pseudo-elements (::name) are not supported; select the element and use attr'
  return message.replace(/\.$/, '')
}

/**
 * The selector with every escape (`\\!`, `\\31 `) replaced by a plain letter: parsed, it gives
 * the same tokens as the selector, each name as written rather than decoded, so a name that
 * starts with an escape (Tailwind's `.\\!mt-0`, `#\\#top`) is not mistaken for one that starts
 * with a character CSS does not allow there.
 */
const ESCAPE = /\\(?:[\da-fA-F]{1,6}\s?|[\s\S])/g

/**
 * What css-what accepts but CSS does not; walks pseudo-class arguments too. `written` is the
 * same list parsed from the selector with its escapes replaced (or null): the first character
 * of a name is checked there.
 */
function tokenProblem(selectors: Selector[][], written: Selector[][] | null): string | null {
  for (let i = 0; i < selectors.length; i++) {
    const sequence = selectors[i]!
    const last = sequence[sequence.length - 1]
    if (last && last.type in COMBINATORS) return `ends with the combinator ${JSON.stringify(COMBINATORS[last.type])}`
    for (let j = 0; j < sequence.length; j++) {
      const token = sequence[j]!
      const raw = written?.[i]?.[j]
      const asWritten = raw && raw.type === token.type ? raw : token
      if (token.type === 'tag' || token.type === 'attribute' || token.type === 'universal') {
        if (token.namespace !== null) return 'namespace prefixes (ns|name) are not supported'
      }
      if (token.type === 'tag' && !NAME_START.test((asWritten as typeof token).name)) return `${JSON.stringify(token.name)} is not a tag name`
      if (token.type === 'attribute') {
        const rawAttribute = asWritten as typeof token
        if (!NAME_START.test(rawAttribute.name)) return `${JSON.stringify(token.name)} is not an attribute name`
        // `.x` and `#x` parse as class/id attribute tokens marked for quirks-mode case handling.
        const shorthand = token.ignoreCase === 'quirks' && ((token.name === 'class' && token.action === 'element') || (token.name === 'id' && token.action === 'equals'))
        if (shorthand && !NAME_START.test(rawAttribute.value)) return `${JSON.stringify(token.value)} is not ${token.name === 'id' ? 'an id' : 'a class name'}`
      }
      if (token.type === 'pseudo' && Array.isArray(token.data)) {
        const rawData = asWritten.type === 'pseudo' && Array.isArray(asWritten.data) ? asWritten.data : null
        const inner = tokenProblem(token.data, rawData)
        if (inner) return inner
      }
    }
  }
  return null
}

/** The selector parsed with its escapes replaced by a letter; null when that does not parse. */
function parseAsWritten(selector: string): Selector[][] | null {
  if (!selector.includes('\\')) return null
  try {
    return parseCss(selector.replace(ESCAPE, 'a'))
  } catch {
    return null
  }
}

/** Why a CSS selector is rejected, or null when it is one we can match. Never throws. */
export function selectorProblem(selector: string): string | null {
  if (typeof selector !== 'string') return 'must be a string'
  if (selector.trim() === '') return 'must not be empty'
  if (selector.length > MAX_SELECTOR) return `must be at most ${MAX_SELECTOR} characters`
  try {
    const tokens = parseCss(selector)
    const problem = tokenProblem(tokens, parseAsWritten(selector))
    if (problem) return `is not a valid CSS selector: ${problem}`
    compileCheck(tokens)
    return null
  } catch (err) {
    return `is not a valid CSS selector: ${reword(err instanceof Error ? err.message : String(err))}`
  }
}

/**
 * Checks Field definitions for what their schema cannot say: selector syntax, sibling names
 * that would collide, `attr`/`type` beside nested `fields` (they would be ignored), nesting
 * depth and the total count. Trusts no shape; paths are `at[i].selector`, `at[i].fields[j].name`.
 */
export function checkFields(fields: unknown, at: string, errors: FieldErrors): void {
  let total = 0
  const visit = (list: unknown, path: string, depth: number) => {
    if (depth > MAX_FIELD_DEPTH) return errors.add(path, `must not nest deeper than ${MAX_FIELD_DEPTH} levels`)
    const seen = new Map<string, number>()
    arr(list).forEach((raw, i) => {
      const field = obj(raw)
      const here = `${path}[${i}]`
      if (++total === MAX_FIELDS_TOTAL + 1) errors.add(here, `a definition may hold at most ${MAX_FIELDS_TOTAL} fields in all`)
      if (typeof field.selector === 'string') {
        const problem = selectorProblem(field.selector)
        if (problem) errors.add(`${here}.selector`, problem)
      }
      if (typeof field.name === 'string') {
        const first = seen.get(field.name)
        if (first === undefined) seen.set(field.name, i)
        else errors.add(`${here}.name`, `repeats the name of ${path}[${first}]`)
      }
      if (field.fields === undefined) return
      for (const key of ['attr', 'type'] as const) if (field[key] !== undefined) errors.add(`${here}.${key}`, 'must not be set on a field with nested fields')
      visit(field.fields, `${here}.fields`, depth + 1)
    })
  }
  visit(fields, at, 1)
}
