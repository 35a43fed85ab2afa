// A run's crawl log, newest first, with the list's filters: steps, statuses, hosts and error
// reasons (docs/api.md, "Crawl logs").
import { html, useState } from './html.js'
import { hashParams, qs, usePaged } from './api.js'
import { problem, when } from './format.js'
import { ERROR_REASONS, LOG_STATUSES, LOG_STEPS } from './vocabulary.js'
import { Table } from './table.js'

function Choices({ name, values, chosen, onChange }) {
  const toggle = (v) => onChange(chosen.includes(v) ? chosen.filter((x) => x !== v) : [...chosen, v])
  return html`<fieldset class="choices" data-filter=${name}>
    <legend>${name}</legend>
    ${values.map((v) => html`<label class="check"><input type="checkbox" name=${`${name}:${v}`} checked=${chosen.includes(v)} onChange=${() => toggle(v)} />${v}</label>`)}
  </fieldset>`
}

export function RunLogs({ run }) {
  const initial = hashParams()
  const [steps, setSteps] = useState(initial.getAll('steps'))
  const [statuses, setStatuses] = useState(initial.getAll('statuses'))
  const [reasons, setReasons] = useState(initial.getAll('error_reasons'))
  const [hosts, setHosts] = useState(initial.get('hosts') || '')
  const filters = { steps, statuses, error_reasons: reasons, hosts: hosts.split(/[\s,]+/).filter(Boolean) }
  const logs = usePaged(`/v1/runs/${run.id}/logs${qs({ per_page: 50, ...filters })}`, [], run.status === 'running' ? 3000 : 0)
  return html`<div class="run-logs">
    <form class="filters" onSubmit=${(e) => e.preventDefault()}>
      <${Choices} name="steps" values=${LOG_STEPS} chosen=${steps} onChange=${setSteps} />
      <${Choices} name="statuses" values=${LOG_STATUSES} chosen=${statuses} onChange=${setStatuses} />
      <label class="field inline"
        ><span class="label">Error reason</span>
        <select name="error_reason" onChange=${(e) => setReasons(e.target.value ? [e.target.value] : [])} value=${reasons[0] || ''}>
          <option value="">any</option>
          ${ERROR_REASONS.map((r) => html`<option value=${r}>${r}</option>`)}
        </select>
      </label>
      <label class="field inline"><span class="label">Hosts</span><input name="hosts" value=${hosts} onChange=${(e) => setHosts(e.target.value)} placeholder="all hosts" /></label>
    </form>
    ${problem(logs.error)}
    <${Table}
      name="logs"
      rows=${logs.rows}
      attrs=${(e) => ({ 'data-step': e.step, 'data-status': e.status })}
      columns=${[
        ['When', (e) => when(e.occurred_at)],
        ['Step', (e) => `${e.step}${e.pipeline_id ? ` (${e.pipeline_id})` : ''}`],
        ['Status', (e) => html`<span class=${`pill pill-${e.status}`}>${e.status}</span>`],
        ['URL', (e) => e.url, 'url'],
        ['HTTP', (e) => e.http_status ?? '', 'num'],
        ['Reason', (e) => html`<span title=${e.error_detail || ''}>${e.error_reason ?? ''}${e.error_detail ? html`<small> ${e.error_detail}</small>` : ''}</span>`],
        ['ms', (e) => e.latency_ms ?? '', 'num'],
      ]}
    />
    ${logs.loaded && !logs.rows.length && html`<p class="empty">No entry matches.</p>`} ${logs.next && html`<button onClick=${logs.more}>More</button>`}
  </div>`
}
