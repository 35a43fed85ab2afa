// Form pieces: a labelled field with the 422 messages the API gave at its path.
import { html, useState } from './html.js'
import { ApiError } from './api.js'

/** Messages of `errors` (path → messages) at `path`, or under it (`config.seeds` shows `config.seeds[0]`'s). */
export function messagesAt(errors, path) {
  if (!errors) return []
  return Object.entries(errors).flatMap(([field, msgs]) =>
    field === path || field.startsWith(`${path}[`) || field.startsWith(`${path}.`) ? msgs.map((m) => (field === path ? m : `${field.slice(path.length).replace(/^\./, '')}: ${m}`)) : [],
  )
}

export function Field({ label, path, errors, children, hint }) {
  const msgs = messagesAt(errors, path)
  return html`<label class=${msgs.length ? 'field invalid' : 'field'} data-field=${path}>
    <span class="label">${label}</span>
    ${children} ${hint && html`<small class="hint">${hint}</small>`} ${msgs.map((m) => html`<small class="error" data-error-for=${path}>${m}</small>`)}
  </label>`
}

/** Checkboxes for a set of names, the ticked kept in the order of `all`, with the API's messages at `path`. */
export function Choices({ legend, name, path, all, chosen, onChange, errors }) {
  const toggle = (v) => onChange(chosen.includes(v) ? chosen.filter((x) => x !== v) : all.filter((x) => x === v || chosen.includes(x)))
  return html`<fieldset class="choices" data-field=${path}>
    <legend>${legend}</legend>
    ${all.map((v) => html`<label class="choice"><input type="checkbox" name=${name} value=${v} checked=${chosen.includes(v)} onChange=${() => toggle(v)} /> ${v}</label>`)}
    ${messagesAt(errors, path).map((m) => html`<small class="error" data-error-for=${path}>${m}</small>`)}
  </fieldset>`
}

/** Errors at paths no field of the form shows (the rest of a 422). */
export function OtherErrors({ errors, shown }) {
  if (!errors) return null
  const rest = Object.entries(errors).filter(([f]) => !shown.some((p) => f === p || f.startsWith(`${p}[`) || f.startsWith(`${p}.`)))
  return rest.length
    ? html`<ul class="problem">
        ${rest.map(([f, m]) => html`<li><code>${f}</code>: ${m.join('; ')}</li>`)}
      </ul>`
    : null
}

/**
 * A JSON editor's value, a JSON `kind` ('object' or 'array'); a blank editor answers `blank` when
 * one is given. Anything else is a 422 at `path`, so useSubmit shows it at the editor as it shows
 * the API's.
 */
export function editorJson(text, path, kind, blank) {
  try {
    if (blank !== undefined && !text.trim()) return blank
    const value = JSON.parse(text)
    if (Array.isArray(value) !== (kind === 'array') || typeof value !== 'object' || value === null) throw new Error(`must be a JSON ${kind}`)
    return value
  } catch (err) {
    throw new ApiError(422, { fields: [{ field: path, errors: [`is not a JSON ${kind}: ${err.message}`] }] })
  }
}

/** Lines of a textarea as a list, blank lines dropped. */
export const lines = (text) =>
  text
    .split('\n')
    .map((s) => s.trim())
    .filter(Boolean)

/**
 * A form's sending, for every form of the dashboard: `send(call, then)` runs the API call and
 * hands `then` its answer; a 422's field errors go to `errors` (shown at their fields), any other
 * failure to `failure`.
 */
export function useSubmit() {
  const [errors, setErrors] = useState(null)
  const [failure, setFailure] = useState(null)
  const send = async (call, then) => {
    setFailure(null)
    let answer
    try {
      answer = await call()
    } catch (err) {
      if (err instanceof ApiError && err.status === 422) setErrors(err.fields)
      else setFailure(err)
      return
    }
    setErrors(null)
    then(answer)
  }
  return { errors, failure, send }
}
