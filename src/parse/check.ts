import { checkFields, selectorProblem } from '../extract/selectors'
import type { FieldErrors } from '../core/errors'
import { looseArray as arr, looseObject as obj } from '../util/loose'
import { regexProblem } from '../util/re2'

/** Adds an error for every string of `list` that RE2 rejects, at `path[i]`. */
export function checkRegexes(list: unknown, path: string, errors: FieldErrors) {
  arr(list).forEach((source, i) => {
    const problem = typeof source === 'string' ? regexProblem(source) : null
    if (problem) errors.add(`${path}[${i}]`, problem)
  })
}

/**
 * Checks parse pipelines for what their schema cannot say: RE2 regexes of url guards and
 * navigators, CSS selectors of navigators and `fields` steps. Trusts no shape (it runs beside
 * schema validation on the raw input, so one 422 lists every problem); `at` prefixes paths.
 */
export function checkPipelines(pipelines: unknown, at: string, errors: FieldErrors) {
  arr(pipelines).forEach((raw, p) => {
    const pipeline = obj(raw)
    const path = `${at}[${p}]`
    arr(pipeline.guards).forEach((guard, g) => {
      if (obj(guard).kind !== 'url') return
      checkRegexes(obj(guard).include, `${path}.guards[${g}].include`, errors)
      checkRegexes(obj(guard).exclude, `${path}.guards[${g}].exclude`, errors)
    })
    const navigator = obj(pipeline.navigator)
    checkRegexes(navigator.include, `${path}.navigator.include`, errors)
    checkRegexes(navigator.exclude, `${path}.navigator.exclude`, errors)
    if (typeof navigator.selector === 'string') {
      const problem = selectorProblem(navigator.selector)
      if (problem) errors.add(`${path}.navigator.selector`, problem)
    }
    arr(pipeline.steps).forEach((step, s) => {
      if (obj(step).kind === 'fields') checkFields(obj(step).fields, `${path}.steps[${s}].fields`, errors)
    })
  })
}
