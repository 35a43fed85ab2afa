// The x402 payment ledger (GET /v1/payments): the process's, the same for every tenant.
import { html, useState } from './html.js'
import { qs, usePaged } from './api.js'
import { problem, when } from './format.js'
import { PAYMENT_STATUSES } from './vocabulary.js'
import { Table } from './table.js'

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
    <${Table}
      name="payments"
      rows=${rows.rows}
      columns=${[
        ['Created', (p) => when(p.created_at)],
        ['Status', (p) => html`<span class=${`pill pill-${p.status}`}>${p.status}</span>`],
        ['Amount', (p) => usd(p.amount), 'num'],
        ['Payer', (p) => p.payer, 'code'],
        ['Network', (p) => `${p.network} (v${p.version})`],
        ['Resource', (p) => p.resource, 'url'],
        ['Settlement', (p) => p.settle_tx || p.settle_error || '', 'code'],
      ]}
    />
    ${rows.loaded && !rows.rows.length && html`<p class="empty">No payments.</p>`} ${rows.next && html`<button onClick=${rows.more}>More</button>`}
  </section>`
}
