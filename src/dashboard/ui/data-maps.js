// Data maps: the list, a create form, and one applied to a URL (POST /v1/data_maps/{id}/apply)
// with the JSON it extracted and the errors of its fields.
import { html, useState } from './html.js'
import { del, get, hostOf, post, useLoad } from './api.js'
import { editorJson, Field, OtherErrors, useSubmit } from './form.js'
import { problem, short } from './format.js'

const FIELDS_EXAMPLE = `[
  { "name": "title", "selector": "h1" },
  { "name": "price", "selector": ".price", "type": "number" }
]`

/**
 * A random (version 4) UUID. Not crypto.randomUUID(): browsers give it to secure contexts only, and
 * a dashboard on a VM is often opened over plain http by its address.
 */
function newUuid() {
  const b = crypto.getRandomValues(new Uint8Array(16))
  b[6] = (b[6] & 0x0f) | 0x40
  b[8] = (b[8] & 0x3f) | 0x80
  const hex = [...b].map((x) => x.toString(16).padStart(2, '0')).join('')
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`
}

/** A new map for a host (created in the catalogue if new); the schema id is a new one when left empty. */
function DataMapForm({ schemaIds, onCreated }) {
  const [f, setF] = useState({ domain: '', schema_id: '', item_selector: '', fields: FIELDS_EXAMPLE })
  const { errors, failure, send } = useSubmit()
  const set = (k) => (e) => setF({ ...f, [k]: e.target.value })
  const submit = (e) => {
    e.preventDefault()
    void send(async () => {
      const map = { fields: editorJson(f.fields, 'map.fields', 'array'), ...(f.item_selector.trim() ? { item_selector: f.item_selector.trim() } : {}) }
      const host = await hostOf(f.domain)
      return post(`/v1/hosts/${host.hash}/data_maps`, { schema_id: f.schema_id.trim() || newUuid(), map })
    }, onCreated)
  }
  return html`<form class="card data-map-form" onSubmit=${submit} novalidate>
    <h3>New data map</h3>
    <div class="grid">
      <${Field} label="Host" path="hosts" errors=${errors}><input name="domain" value=${f.domain} onInput=${set('domain')} placeholder="shop.example" /><//>
      <${Field} label="Schema id" path="schema_id" errors=${errors} hint="what the map extracts, shared by the maps of other hosts; a new one when empty">
        <input name="schema_id" list="schema-ids" value=${f.schema_id} onInput=${set('schema_id')} placeholder="new" />
        <datalist id="schema-ids">${schemaIds.map((id) => html`<option value=${id} />`)}</datalist>
      <//>
      <${Field} label="Item selector" path="map.item_selector" errors=${errors} hint="optional: one object per matched element">
        <input name="item_selector" value=${f.item_selector} onInput=${set('item_selector')} placeholder=".product" />
      <//>
    </div>
    <${Field} label="Fields (JSON: name, selector, attr, type, multiple, required, fields)" path="map.fields" errors=${errors}>
      <textarea name="fields" class="code" rows="6" value=${f.fields} onInput=${set('fields')} spellcheck="false" />
    <//>
    <${OtherErrors} errors=${errors} shown=${['hosts', 'schema_id', 'map.item_selector', 'map.fields']} />
    ${problem(failure)}
    <button type="submit">Create</button>
  </form>`
}

function Apply({ map, onDeleted }) {
  const [url, setUrl] = useState(`https://${map.host?.domain ?? ''}/`)
  const [answer, setAnswer] = useState(null)
  const [failure, setFailure] = useState(null)
  const [busy, setBusy] = useState(false)
  const submit = async (e) => {
    e.preventDefault()
    setFailure(null)
    setBusy(true)
    try {
      setAnswer(await post(`/v1/data_maps/${map.id}/apply`, { url }))
    } catch (err) {
      setAnswer(null)
      setFailure(err)
    } finally {
      setBusy(false)
    }
  }
  const remove = async () => {
    if (!confirm(`Delete data map ${short(map.id)} of ${map.host?.domain}?`)) return
    try {
      await del(`/v1/data_maps/${map.id}`)
      onDeleted()
    } catch (err) {
      setFailure(err)
    }
  }
  return html`<div class="card apply">
    <div class="bar">
      <h3>Map ${short(map.id)} on ${map.host?.domain}</h3>
      <button class="danger" onClick=${remove}>Delete</button>
    </div>
    <details>
      <summary>Definition</summary>
      <pre class="code">${JSON.stringify(map.map, null, 2)}</pre>
    </details>
    <form class="inline-form" onSubmit=${submit}>
      <input name="url" value=${url} onInput=${(e) => setUrl(e.target.value)} />
      <button type="submit" disabled=${busy}>Apply</button>
    </form>
    ${problem(failure)} ${answer && html`<pre class="code result" data-view="apply">${JSON.stringify(answer, null, 2)}</pre>`}
  </div>`
}

export function DataMaps() {
  const maps = useLoad(() => get('/v1/data_maps?per_page=100'), [])
  const [open, setOpen] = useState(null)
  return html`<section>
    <div class="bar"><h2>Data maps</h2></div>
    ${problem(maps.error)}
    <div class="split">
      <ul class="pages">
        ${(maps.data?.data || []).map(
          (m) =>
            html`<li class=${open?.id === m.id ? 'selected' : ''}>
              <button class="link" onClick=${() => setOpen(m)}>${m.host?.domain}: ${short(m.id)}</button>
              <small>${m.map.fields.length} fields · schema ${short(m.schema_id)}</small>
            </li>`,
        )}
        ${maps.data && !maps.data.data.length && html`<li class="empty">No data maps.</li>`}
      </ul>
      ${
        open &&
        html`<${Apply}
          key=${open.id}
          map=${open}
          onDeleted=${() => {
            setOpen(null)
            maps.reload()
          }}
        />`
      }
    </div>
    <${DataMapForm}
      schemaIds=${[...new Set((maps.data?.data || []).map((m) => m.schema_id))]}
      onCreated=${(m) => {
        maps.reload()
        setOpen(m)
      }}
    />
  </section>`
}
