import { parse as parseCss, type Selector } from 'css-what'
import type { FieldErrors } from '../http/errors'
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

/** What css-what accepts but CSS does not; walks pseudo-class arguments too. */
function tokenProblem(selectors: Selector[][]): string | null {
  for (const sequence of selectors) {
    const last = sequence[sequence.length - 1]
    if (last && last.type in COMBINATORS) return `ends with the combinator ${JSON.stringify(COMBINATORS[last.type])}`
    for (const token of sequence) {
      if (token.type === 'tag' || token.type === 'attribute' || token.type === 'universal') {
        if (token.namespace !== null) return 'namespace prefixes (ns|name) are not supported'
      }
      if (token.type === 'tag' && !NAME_START.test(token.name)) return `${JSON.stringify(token.name)} is not a tag name`
      if (token.type === 'attribute') {
        if (!NAME_START.test(token.name)) return `${JSON.stringify(token.name)} is not an attribute name`
        // `.x` and `#x` parse as class/id attribute tokens marked for quirks-mode case handling.
        const shorthand = token.ignoreCase === 'quirks' && ((token.name === 'class' && token.action === 'element') || (token.name === 'id' && token.action === 'equals'))
        if (shorthand && !NAME_START.test(token.value)) return `${JSON.stringify(token.value)} is not a ${token.name === 'id' ? 'id' : 'class name'}`
      }
      if (token.type === 'pseudo' && Array.isArray(token.data)) {
        const inner = tokenProblem(token.data)
        if (inner) return inner
      }
    }
  }
  return null
}

/** Why a CSS selector is rejected, or null when it is one we can match. Never throws. */
export function selectorProblem(selector: string): string | null {
  if (typeof selector !== 'string') return 'must be a string'
  if (selector.trim() === '') return 'must not be empty'
  if (selector.length > MAX_SELECTOR) return `must be at most ${MAX_SELECTOR} characters`
  try {
    const tokens = parseCss(selector)
    const problem = tokenProblem(tokens)
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
