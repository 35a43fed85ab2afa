// Data maps: the list, and one applied to a URL (POST /v1/data_maps/{id}/apply) with the JSON
// it extracted and the errors of its fields.
import { html, useState } from './html.js'
import { get, post, useLoad } from './api.js'
import { problem, short } from './format.js'

function Apply({ map }) {
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
  return html`<div class="card apply">
    <h3>Map ${short(map.id)} on ${map.host?.domain}</h3>
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
        ${maps.data && !maps.data.data.length && html`<li class="empty">No data maps. Create them with <code>POST /v1/hosts/{host_hash}/data_maps</code> (<a href="/docs">API docs</a>).</li>`}
      </ul>
      ${open && html`<${Apply} key=${open.id} map=${open} />`}
    </div>
  </section>`
}
