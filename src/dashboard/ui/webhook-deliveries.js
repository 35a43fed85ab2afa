// A webhook's deliveries, newest first and polled: each with its attempts, its next attempt, its
// payload as sent (collapsed), and a Retry for a failed one; filtered by status.
import { html, useState } from './html.js'
import { get, post, qs, useLoad, usePaged } from './api.js'
import { pill, problem, when } from './format.js'
import { jobOf } from './webhooks.js'
import { DELIVERY_STATUSES } from './vocabulary.js'

const POLL_MS = 2000

/** What an attempt got: the error when it failed (a status other than 2xx says so), else the status. */
const outcomeOf = (a) => a.error || `HTTP ${a.status_code}`

function Attempts({ attempts }) {
  if (!attempts.length) return html`<span class="hint">none yet</span>`
  return html`<ol class="attempts">
    ${attempts.map(
      (a) => html`<li class=${a.error ? 'failed' : 'ok'}><span class="at">${when(a.at)}</span> <b class="outcome">${outcomeOf(a)}</b> <span class="duration">${a.duration_ms} ms</span></li>`,
    )}
  </ol>`
}

function Delivery({ d, onRetry }) {
  return html`<tr data-id=${d.id} data-status=${d.status}>
    <td data-label="Created">${when(d.created_at)}</td>
    <td data-label="Event" class="code event">${d.event}</td>
    <td data-label="Status" class="status">${pill(d.status)} ${d.status === 'failed' && html`<button name="retry" onClick=${() => onRetry(d)}>Retry</button>`}</td>
    <td data-label="Attempts"><${Attempts} attempts=${d.attempts} /></td>
    <td data-label="Next attempt" class="next">${when(d.next_attempt_at)}</td>
    <td data-label="Payload" class="payload">
      <details>
        <summary><code>${d.id}</code></summary>
        <pre class="code">${JSON.stringify(d.payload, null, 2)}</pre>
      </details>
    </td>
  </tr>`
}

export function WebhookDeliveries({ id }) {
  const [status, setStatus] = useState('')
  const [failure, setFailure] = useState(null)
  const webhook = useLoad(() => get(`/v1/webhooks/${id}`), [id])
  const jobs = useLoad(() => get('/v1/jobs?per_page=100'), [])
  const deliveries = usePaged(`/v1/webhooks/${id}/deliveries${qs({ per_page: 50, statuses: status })}`, [], POLL_MS)
  const names = Object.fromEntries((jobs.data?.data || []).map((j) => [j.id, j.name]))
  const w = webhook.data
  const retry = async (d) => {
    setFailure(null)
    try {
      await post(`/v1/webhooks/${id}/deliveries/${d.id}/retry`)
      deliveries.reload()
    } catch (err) {
      setFailure(err)
    }
  }
  return html`<section class="deliveries">
    <div class="bar">
      <h2>Deliveries</h2>
      <a href="#/webhooks">all webhooks</a>
      <label class="field inline"
        ><span class="label">Status</span>
        <select name="status" value=${status} onChange=${(e) => setStatus(e.target.value)}>
          <option value="">every status</option>
          ${DELIVERY_STATUSES.map((s) => html`<option>${s}</option>`)}
        </select>
      </label>
    </div>
    ${problem(webhook.error)}
    ${
      w &&
      html`<p class="webhook-summary">
        <span class="url">${w.url}</span> · ${jobOf(w, names)} · <span class="code">${w.events.join(' ')}</span> · ${w.enabled ? 'enabled' : html`<b>disabled</b>: its deliveries wait`}
      </p>`
    }
    ${problem(webhook.error ? null : deliveries.error || failure)}
    <table class="list deliveries">
      <thead>
        <tr>
          <th>Created</th>
          <th>Event</th>
          <th>Status</th>
          <th>Attempts</th>
          <th>Next attempt</th>
          <th>Payload</th>
        </tr>
      </thead>
      <tbody>
        ${deliveries.rows.map((d) => html`<${Delivery} key=${d.id} d=${d} onRetry=${retry} />`)}
      </tbody>
    </table>
    ${deliveries.loaded && !deliveries.rows.length && html`<p class="empty">No deliveries${status ? ` ${status}` : ''}.</p>`}
    ${deliveries.next && html`<button onClick=${deliveries.more}>More</button>`}
  </section>`
}
