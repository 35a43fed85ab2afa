// A run's pages: the links it visited, and for one of them its markdown (the export's record,
// rendered from the stored body), its HTML (the raw artifact's bytes, shown as source) and its
// artifacts.
import { html, useState } from './html.js'
import { download, get, qs, text, useLoad, usePaged } from './api.js'
import { bytes, problem, when } from './format.js'
import { Table } from './table.js'

const VIEWS = [
  ['markdown', 'Markdown'],
  ['html', 'HTML'],
  ['artifacts', 'Artifacts'],
]

function PageView({ run, link }) {
  const [view, setView] = useState('markdown')
  const [whole, setWhole] = useState(false)
  const record = useLoad(async () => {
    const lines = await text(`/v1/runs/${run.id}/export${qs({ urls: link.url, main_content: !whole })}`)
    return JSON.parse(lines.split('\n')[0] || 'null')
  }, [run.id, link.hash, whole])
  const artifacts = useLoad(() => get(`/v1/artifacts${qs({ run_ids: run.id, url_hashes: link.hash, per_page: 100 })}`), [run.id, link.hash])
  const raw = (artifacts.data?.data || []).find((a) => a.kind === 'raw')
  const source = useLoad(() => (view === 'html' && raw ? text(`/v1/artifacts/${raw.id}/blob`) : Promise.resolve(null)), [view, raw?.id])
  const r = record.data
  return html`<div class="page-view card">
    <h3 class="url">${r?.title || link.url}</h3>
    <p class="meta"><a href=${link.url} rel="noreferrer noopener" target="_blank">${link.url}</a> · status ${link.status ?? '—'} · depth ${link.depth}</p>
    ${r?.error && html`<p class="problem">${r.error.reason}: ${r.error.detail}</p>`}
    <nav class="tabs small">${VIEWS.map(([k, label]) => html`<button class=${view === k ? 'active link' : 'link'} name=${`view-${k}`} onClick=${() => setView(k)}>${label}</button>`)}</nav>
    ${
      view === 'markdown' &&
      html`<label class="check"><input type="checkbox" checked=${whole} onChange=${(e) => setWhole(e.target.checked)} /> whole page (not only the main content)</label>
        ${problem(record.error)}
        <pre class="markdown" data-view="markdown">${record.data ? (r?.markdown ?? '(no markdown: the page failed, is not HTML or text, or the run stored no body)') : 'Loading…'}</pre>`
    }
    ${
      view === 'html' &&
      html`${problem(source.error)}
        <pre class="source" data-view="html">${raw ? (source.data ?? 'Loading…') : '(no raw body stored for this page)'}</pre>`
    }
    ${view === 'artifacts' && html`<${ArtifactList} rows=${artifacts.data?.data || []} />`}
  </div>`
}

export function ArtifactList({ rows }) {
  if (!rows.length) return html`<p class="empty">No artifacts.</p>`
  return html`<${Table}
    name="artifacts"
    rows=${rows}
    attrs=${(a) => ({ 'data-id': a.id })}
    columns=${[
      ['Kind', (a) => `${a.kind}${a.pipeline_id ? ` (${a.pipeline_id})` : ''}`],
      ['URL', (a) => a.url, 'url'],
      ['Type', (a) => a.content_type],
      ['Size', (a) => bytes(a.size), 'num'],
      ['Created', (a) => when(a.created_at)],
      [null, (a) => html`<button onClick=${() => download(`/v1/artifacts/${a.id}/blob`, fileName(a)).catch((e) => alert(e.message))}>Download</button>`],
    ]}
  />`
}

const fileName = (a) => `${a.id}.${a.kind === 'parsed' ? 'json' : /html/.test(a.content_type) ? 'html' : 'bin'}`

export function RunPages({ run }) {
  const [host, setHost] = useState('')
  const links = usePaged(`/v1/runs/${run.id}/links${qs({ per_page: 50, hosts: host })}`, [], run.status === 'running' ? 3000 : 0)
  const [open, setOpen] = useState(null)
  return html`<div class="run-pages">
    <form class="filters" onSubmit=${(e) => e.preventDefault()}>
      <label class="field inline"><span class="label">Host</span><input name="host" value=${host} onChange=${(e) => setHost(e.target.value.trim())} placeholder="all hosts" /></label>
    </form>
    ${problem(links.error)}
    <div class="split">
      <ul class="pages">
        ${links.rows.map(
          (l) =>
            html`<li class=${open?.hash === l.hash ? 'selected' : ''} data-url=${l.url}>
              <button class="link url" onClick=${() => setOpen(l)}>${l.url}</button>
              <small>${l.status ?? 'no answer'} · depth ${l.depth}</small>
            </li>`,
        )}
        ${links.loaded && !links.rows.length && html`<li class="empty">No page visited yet.</li>`} ${links.next && html`<li><button onClick=${links.more}>More</button></li>`}
      </ul>
      ${open && html`<${PageView} key=${open.hash} run=${run} link=${open} />`}
    </div>
  </div>`
}
