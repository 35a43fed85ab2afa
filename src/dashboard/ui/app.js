// The dashboard's shell: the tenant (asked once, kept in localStorage), the header, and hash
// routes (#/jobs, #/runs/ID/logs, #/webhooks/ID, …) to the pages.
import { html, render, useEffect, useState } from './html.js'
import { getTenant, setTenant } from './api.js'
import { Jobs, JobEdit } from './jobs.js'
import { Runs } from './runs.js'
import { RunPage } from './run.js'
import { Artifacts } from './artifacts.js'
import { Triggers } from './triggers.js'
import { Patterns } from './patterns.js'
import { DataMaps } from './data-maps.js'
import { Payments } from './payments.js'
import { Webhooks } from './webhooks.js'
import { WebhookDeliveries } from './webhook-deliveries.js'

const TENANT = /^[A-Za-z0-9._:-]{1,128}$/
const NAV = [
  ['jobs', 'Jobs'],
  ['runs', 'Runs'],
  ['artifacts', 'Artifacts'],
  ['triggers', 'Triggers'],
  ['webhooks', 'Webhooks'],
  ['patterns', 'Pattern sets'],
  ['data-maps', 'Data maps'],
  ['payments', 'Payments'],
]

const path = () => location.hash.replace(/^#\/?/, '').split('?')[0].split('/').filter(Boolean)

function useHash() {
  const [parts, setParts] = useState(path())
  useEffect(() => {
    const on = () => setParts(path())
    addEventListener('hashchange', on)
    return () => removeEventListener('hashchange', on)
  }, [])
  return parts
}

function TenantForm({ current, onDone }) {
  const [value, setValue] = useState(current)
  const valid = TENANT.test(value)
  const submit = (e) => {
    e.preventDefault()
    if (!valid) return
    setTenant(value)
    onDone(value)
  }
  return html`<form class="tenant-form card" onSubmit=${submit}>
    <h1>trawl</h1>
    <label class="field"
      ><span class="label">Tenant</span>
      <input name="tenant" value=${value} onInput=${(e) => setValue(e.target.value.trim())} placeholder="acme" autofocus />
      <small class="hint">Sent as X-Tenant-Id with every request: letters, digits and <code>. _ : -</code>, up to 128.</small>
    </label>
    <button type="submit" disabled=${!valid}>Open</button>
  </form>`
}

function page(parts) {
  const [section, id, tab] = parts
  switch (section) {
    case 'jobs':
      return id ? html`<${JobEdit} id=${id === 'new' ? null : id} />` : html`<${Jobs} />`
    case 'runs':
      return id ? html`<${RunPage} id=${id} tab=${tab || 'overview'} />` : html`<${Runs} />`
    case 'artifacts':
      return html`<${Artifacts} />`
    case 'triggers':
      return html`<${Triggers} />`
    case 'webhooks':
      return id ? html`<${WebhookDeliveries} id=${id} />` : html`<${Webhooks} />`
    case 'patterns':
      return html`<${Patterns} />`
    case 'data-maps':
      return html`<${DataMaps} />`
    case 'payments':
      return html`<${Payments} />`
    default:
      return html`<${Runs} />`
  }
}

function App() {
  const [tenant, setT] = useState(getTenant())
  const [changing, setChanging] = useState(false)
  const parts = useHash()
  if (!tenant || changing)
    return html`<${TenantForm}
      current=${tenant}
      onDone=${(t) => {
        setT(t)
        setChanging(false)
      }}
    />`
  const section = parts[0] || 'runs'
  return html`<header class="top">
      <a class="brand" href="#/runs">trawl</a>
      <nav>${NAV.map(([key, label]) => html`<a href=${`#/${key}`} class=${section === key ? 'active' : ''}>${label}</a>`)}</nav>
      <button class="tenant link" title="change tenant" onClick=${() => setChanging(true)}>tenant: <b>${tenant}</b></button>
    </header>
    <main key=${tenant}>${page(parts)}</main>`
}

render(html`<${App} />`, document.getElementById('app'))
