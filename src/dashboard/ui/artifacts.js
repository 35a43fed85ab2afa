// Artifacts: every stored body of the tenant's runs, newest first, filtered by run and kind, each
// with a download.
import { html, useState } from './html.js'
import { hashParams, qs, usePaged } from './api.js'
import { problem } from './format.js'
import { ArtifactList } from './run-pages.js'

export function Artifacts() {
  const [run, setRun] = useState(hashParams().get('run') || '')
  const [kind, setKind] = useState('')
  const rows = usePaged(`/v1/artifacts${qs({ per_page: 50, run_ids: run, kinds: kind })}`, [])
  return html`<section>
    <div class="bar"><h2>Artifacts</h2></div>
    <form class="filters" onSubmit=${(e) => e.preventDefault()}>
      <label class="field inline"><span class="label">Run id</span><input name="run" value=${run} onChange=${(e) => setRun(e.target.value.trim())} placeholder="every run" /></label>
      <label class="field inline"
        ><span class="label">Kind</span>
        <select name="kind" value=${kind} onChange=${(e) => setKind(e.target.value)}>
          <option value="">any</option>
          <option>raw</option>
          <option>parsed</option>
          <option>asset</option>
        </select>
      </label>
    </form>
    ${problem(rows.error)}
    <${ArtifactList} rows=${rows.rows} />
    ${rows.next && html`<button onClick=${rows.more}>More</button>`}
  </section>`
}
