// A job's config as a form: name, seeds, scope, limits, concurrency, and the rest of the config
// as raw JSON. A 422 is shown at the field whose path it names.
import { html, useState } from './html.js'
import { post, put } from './api.js'
import { editorJson, Field, OtherErrors, lines, useSubmit } from './form.js'

const NUMBERS = [
  ['limits', 'max_depth', 'Max depth'],
  ['limits', 'max_urls', 'Max URLs'],
  ['politeness', 'concurrency', 'Concurrency'],
  ['politeness', 'per_host_concurrency', 'Per-host concurrency'],
]
const TEXTS = [
  ['limits', 'max_age', 'Max age', '1h'],
  ['politeness', 'delay', 'Delay between requests to a host', '0s'],
]
/** What the form's own fields show; the JSON editor holds everything else. */
const SHOWN = ['name', 'config.seeds', 'config.scope.domains', ...[...NUMBERS, ...TEXTS].map(([g, k]) => `config.${g}.${k}`)]

function split(config) {
  const { seeds = [], ...rest } = structuredClone(config || {})
  const form = { seeds: seeds.join('\n'), domains: rest.scope?.domains || '' }
  if (rest.scope) delete rest.scope.domains
  for (const [g, k] of [...NUMBERS, ...TEXTS]) {
    form[k] = rest[g]?.[k] ?? ''
    if (rest[g]) delete rest[g][k]
  }
  for (const g of ['scope', 'limits', 'politeness']) if (rest[g] && Object.keys(rest[g]).length === 0) delete rest[g]
  return { form, rest: JSON.stringify(rest, null, 2) }
}

function join(form, rest) {
  const config = rest
  const seeds = lines(form.seeds)
  if (seeds.length) config.seeds = seeds
  if (form.domains) config.scope = { ...config.scope, domains: form.domains }
  // Not a number: sent as typed, so the API's 422 says what is wrong at the field.
  const number = (v) => (/^-?\d+$/.test(String(v).trim()) ? Number(v) : v)
  for (const [g, k] of NUMBERS) if (form[k] !== '') config[g] = { ...config[g], [k]: number(form[k]) }
  for (const [g, k] of TEXTS) if (form[k] !== '') config[g] = { ...config[g], [k]: form[k] }
  return config
}

/** Create (job null) or edit a job; `onSaved(job, run?)` after the API took it. */
export function JobForm({ job, onSaved }) {
  const initial = split(job?.config ?? { limits: { max_depth: 2, max_urls: 100 } })
  const [name, setName] = useState(job?.name ?? '')
  const [form, setForm] = useState(initial.form)
  const [rest, setRest] = useState(initial.rest)
  const { errors, failure, send } = useSubmit()
  const [busy, setBusy] = useState(false)
  const set = (k) => (e) => setForm({ ...form, [k]: e.target.value })

  const save = (withRun) =>
    send(
      async () => {
        const body = { name, config: join(form, editorJson(rest, 'config (JSON)', 'object', {})) }
        setBusy(true)
        try {
          return await (job ? put(`/v1/jobs/${job.id}`, body) : post(`/v1/jobs${withRun ? '?create_run=true' : ''}`, body))
        } finally {
          setBusy(false)
        }
      },
      (saved) => onSaved(saved, saved.run),
    )
  const submit = (e) => {
    e.preventDefault()
    void save(e.submitter?.value === 'run')
  }
  const jsonErrors = errors?.['config (JSON)']
  return html`<form class="job-form card" onSubmit=${submit} novalidate>
    <${Field} label="Name" path="name" errors=${errors}><input name="name" value=${name} onInput=${(e) => setName(e.target.value)} /><//>
    <${Field} label="Seeds (one URL a line)" path="config.seeds" errors=${errors}><textarea name="seeds" rows="3" value=${form.seeds} onInput=${set('seeds')} /><//>
    <${Field} label="Scope" path="config.scope.domains" errors=${errors}>
      <select name="domains" value=${form.domains} onChange=${set('domains')}>
        <option value="">default (same host)</option>
        <option value="same_host">same host</option>
        <option value="same_domain">same registrable domain</option>
        <option value="any">any</option>
      </select>
    <//>
    <div class="grid">
      ${NUMBERS.map(([g, k, label]) => html`<${Field} label=${label} path=${`config.${g}.${k}`} errors=${errors}><input name=${k} inputmode="numeric" value=${form[k]} onInput=${set(k)} placeholder="default" /><//>`)}
      ${TEXTS.map(([g, k, label, ph]) => html`<${Field} label=${label} path=${`config.${g}.${k}`} errors=${errors}><input name=${k} value=${form[k]} onInput=${set(k)} placeholder=${ph} /><//>`)}
    </div>
    <label class=${jsonErrors ? 'field invalid' : 'field'}>
      <span class="label">The rest of the config (JSON: fetch, pipelines, store, scope include/exclude…)</span>
      <textarea name="rest" class="code" rows="8" value=${rest} onInput=${(e) => setRest(e.target.value)} spellcheck="false" />
      ${jsonErrors?.map((m) => html`<small class="error">${m}</small>`)}
    </label>
    <${OtherErrors} errors=${jsonErrors ? null : errors} shown=${SHOWN} />
    ${failure && html`<p class="problem">${failure.message}</p>`}
    <div class="actions">
      <button type="submit" name="save" value="save" disabled=${busy}>${job ? 'Save' : 'Create'}</button>
      ${!job && html`<button type="submit" name="run" value="run" disabled=${busy}>Create and run</button>`}
    </div>
  </form>`
}
