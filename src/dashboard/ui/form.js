// Form pieces: a labelled field with the 422 messages the API gave at its path.
import { html } from './html.js'

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

/** Lines of a textarea as a list, blank lines dropped. */
export const lines = (text) =>
  text
    .split('\n')
    .map((s) => s.trim())
    .filter(Boolean)
