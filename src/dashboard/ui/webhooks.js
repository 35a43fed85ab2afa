// Webhooks (docs/webhooks.md): the list (enable, disable, delete, a link to the deliveries) and
// a create form. The secret the API answers a create with is shown at once, prominently: the
// receiver cannot verify a request without it.
import { html, useRef, useState } from './html.js'
import { del, get, patch, post, useLoad } from './api.js'
import { Choices, Field, OtherErrors, useSubmit } from './form.js'
import { problem, short } from './format.js'
import { WEBHOOK_EVENTS } from './vocabulary.js'
import { Table } from './table.js'

/** The job a webhook is for, by name when the tenant still has it. */
export const jobOf = (w, names) => (w.job_id ? (names[w.job_id] ?? short(w.job_id)) : 'all jobs')

function NewSecret({ created, onDone }) {
  const input = useRef(null)
  const [copied, setCopied] = useState('')
  const copy = async () => {
    input.current.select()
    // The clipboard API exists only in a secure context (https, or localhost); elsewhere the selected text is left for Ctrl+C.
    const done = navigator.clipboard
      ? await navigator.clipboard.writeText(created.secret).then(
          () => true,
          () => false,
        )
      : false
    setCopied(done ? 'copied' : 'selected: press Ctrl+C')
  }
  return html`<div class="card new-secret" role="status">
    <h3>Webhook created: its signing secret</h3>
    <p>Copy it now and give it to the receiver at <span class="url">${created.url}</span>: it verifies every request's <code>webhook-signature</code> with it.</p>
    <div class="inline-form">
      <input class="code" name="secret-created" readonly value=${created.secret} ref=${input} onFocus=${(e) => e.target.select()} />
      <button type="button" name="copy" onClick=${copy}>Copy</button>
    </div>
    ${copied && html`<small class="hint copied">${copied}</small>`}
    <button type="button" class="link" onClick=${onDone}>I have copied it</button>
  </div>`
}

function WebhookForm({ jobs, onCreated }) {
  const empty = { url: '', job: '', events: ['run.finished'], secret: '' }
  const [f, setF] = useState(empty)
  const { errors, failure, send } = useSubmit()
  const set = (k) => (e) => setF({ ...f, [k]: e.target.value })
  const submit = (e) => {
    e.preventDefault()
    void send(
      () => post('/v1/webhooks', { url: f.url, events: f.events, ...(f.job ? { job_id: f.job } : {}), ...(f.secret ? { secret: f.secret } : {}) }),
      (created) => {
        setF(empty)
        onCreated(created)
      },
    )
  }
  return html`<form class="webhook-form card" onSubmit=${submit} novalidate>
    <h3>New webhook</h3>
    <div class="grid">
      <${Field} label="URL" path="url" errors=${errors}><input name="url" class="code" value=${f.url} onInput=${set('url')} placeholder="https://your-receiver/trawl" /><//>
      <${Field} label="Job" path="job_id" errors=${errors}>
        <select name="job" value=${f.job} onChange=${set('job')}>
          <option value="">all jobs</option>
          ${jobs.map((j) => html`<option value=${j.id}>${j.name}</option>`)}
        </select>
      <//>
      <${Field} label="Secret" path="secret" errors=${errors} hint="whsec_ and base64; empty: one is generated">
        <input name="secret" class="code" value=${f.secret} onInput=${set('secret')} placeholder="generated" autocomplete="off" />
      <//>
    </div>
    <${Choices} legend="Events" name="events" path="events" all=${WEBHOOK_EVENTS} chosen=${f.events} errors=${errors} onChange=${(v) => setF({ ...f, events: v })} />
    <${OtherErrors} errors=${errors} shown=${['url', 'job_id', 'secret', 'events']} />
    ${problem(failure)}
    <button type="submit">Create webhook</button>
  </form>`
}

export function Webhooks() {
  const webhooks = useLoad(() => get('/v1/webhooks?per_page=100'), [])
  const jobs = useLoad(() => get('/v1/jobs?per_page=100'), [])
  const [created, setCreated] = useState(null)
  const names = Object.fromEntries((jobs.data?.data || []).map((j) => [j.id, j.name]))
  const act = (f) => f().then(webhooks.reload, (err) => alert(err.message))
  const onCreated = (w) => {
    setCreated(w)
    webhooks.reload()
  }
  return html`<section>
    <div class="bar"><h2>Webhooks</h2></div>
    ${created && html`<${NewSecret} created=${created} onDone=${() => setCreated(null)} />`} ${problem(webhooks.error)}
    <${Table}
      name="webhooks"
      rows=${webhooks.data?.data || []}
      attrs=${(w) => ({ 'data-id': w.id })}
      columns=${[
        ['URL', (w) => html`<a href=${`#/webhooks/${w.id}`}>${w.url}</a>`, 'url'],
        ['Job', (w) => jobOf(w, names)],
        ['Events', (w) => w.events.join(' '), 'code'],
        ['Enabled', (w) => (w.enabled ? 'yes' : 'no')],
        [
          null,
          (w) =>
            html`<a class="button" href=${`#/webhooks/${w.id}`}>Deliveries</a>
              <button name="toggle" onClick=${() => act(() => patch(`/v1/webhooks/${w.id}`, { enabled: !w.enabled }))}>${w.enabled ? 'Disable' : 'Enable'}</button>
              <button class="danger" onClick=${() => confirm(`Delete the webhook to ${w.url} and its deliveries?`) && act(() => del(`/v1/webhooks/${w.id}`))}>Delete</button>`,
        ],
      ]}
    />
    ${webhooks.data && !webhooks.data.data.length && html`<p class="empty">No webhooks.</p>`} ${jobs.data && html`<${WebhookForm} jobs=${jobs.data.data} onCreated=${onCreated} />`}
  </section>`
}
