// The x402 payment ledger (GET /v1/payments): the process's, the same for every tenant.
import { html, useState } from './html.js'
import { qs, usePaged } from './api.js'
import { problem, when } from './format.js'
import { PAYMENT_STATUSES } from './vocabulary.js'

/** USDC has 6 decimals; the ledger keeps atomic units. */
const usd = (atomic) => `$${(Number(atomic) / 1e6).toFixed(6).replace(/0{1,4}$/, '')}`

export function Payments() {
  const [status, setStatus] = useState('')
  const rows = usePaged(`/v1/payments${qs({ per_page: 50, status })}`, [])
  return html`<section>
    <div class="bar">
      <h2>Payments</h2>
      <select name="status" value=${status} onChange=${(e) => setStatus(e.target.value)}>
        <option value="">every status</option>
        ${PAYMENT_STATUSES.map((s) => html`<option>${s}</option>`)}
      </select>
    </div>
    <p class="hint">The ledger of paid scrapes is the service's, not a tenant's: every tenant sees the same rows.</p>
    ${problem(rows.error)}
    <table class="list payments">
      <thead>
        <tr>
          <th>Created</th>
          <th>Status</th>
          <th>Amount</th>
          <th>Payer</th>
          <th>Network</th>
          <th>Resource</th>
          <th>Settlement</th>
        </tr>
      </thead>
      <tbody>
        ${rows.rows.map(
          (p) =>
            html`<tr>
              <td data-label="Created">${when(p.created_at)}</td>
              <td data-label="Status"><span class=${`pill pill-${p.status}`}>${p.status}</span></td>
              <td data-label="Amount" class="num">${usd(p.amount)}</td>
              <td data-label="Payer" class="code">${p.payer}</td>
              <td data-label="Network">${p.network} (v${p.version})</td>
              <td data-label="Resource" class="url">${p.resource}</td>
              <td data-label="Settlement" class="code">${p.settle_tx || p.settle_error || ''}</td>
            </tr>`,
        )}
      </tbody>
    </table>
    ${rows.loaded && !rows.rows.length && html`<p class="empty">No payments.</p>`} ${rows.next && html`<button onClick=${rows.more}>More</button>`}
  </section>`
}
