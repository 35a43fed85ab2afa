// One run: its progress (polled), its controls, charts from /metrics and /latency, its errors by
// reason, and tabs for its pages, its log and its link graph.
import { html } from './html.js'
import { get, qs, useLoad } from './api.js'
import { bytes, pill, problem, short, when } from './format.js'
import { Lines, StackedBars } from './charts.js'
import { endOf, POLL_MS, RunControls, useRates } from './runs.js'
import { RunPages } from './run-pages.js'
import { RunLogs } from './run-logs.js'
import { RunGraph } from './run-graph.js'
import { Table } from './table.js'

const TABS = [
  ['overview', 'Overview'],
  ['pages', 'Pages'],
  ['logs', 'Logs'],
  ['graph', 'Link graph'],
]

/** The window whose buckets suit a run of this length: a few dozen points at most. */
function windowOf(run) {
  const ms = (run.finished_at ? Date.parse(run.finished_at) : Date.now()) - Date.parse(run.started_at || run.created_at)
  return ms < 2 * 3600_000 ? 'minute' : ms < 3 * 86_400_000 ? 'hour' : 'day'
}

function Charts({ run }) {
  const live = run.status === 'running'
  const window = windowOf(run)
  const since = run.started_at ? new Date(Date.parse(run.started_at) - 1).toISOString() : undefined
  const metrics = useLoad(() => get(`/v1/runs/${run.id}/metrics${qs({ window, group_by: 'status', 'filters[step]': 'fetch', occurred_after: since })}`), [run.id, window, run.status], live ? 5000 : 0)
  const latency = useLoad(() => get(`/v1/runs/${run.id}/latency${qs({ window, steps: 'fetch', occurred_after: since })}`), [run.id, window, run.status], live ? 5000 : 0)
  const statuses = [...new Set((metrics.data?.buckets || []).flatMap((b) => b.groups.map((g) => g.status)))].sort()
  const counts = (metrics.data?.buckets || []).map((b) => ({ start: b.start, values: Object.fromEntries(b.groups.map((g) => [g.status, g.count])) }))
  const p = ['p50', 'p90', 'p99']
  const lat = (latency.data?.buckets || []).map((b) => ({ start: b.start, values: Object.fromEntries(p.map((k) => [k, b.steps.find((s) => s.step === 'fetch')?.[k] ?? 0])) }))
  return html`<div class="charts">
    ${problem(metrics.error || latency.error)}
    <${StackedBars} title=${`Fetches per ${window}, by status`} buckets=${counts} keys=${statuses} />
    <${Lines} title=${`Fetch latency per ${window} (ms)`} buckets=${lat} keys=${p} unit="" />
  </div>`
}

function Errors({ run }) {
  const reasons = Object.entries(run.error_counts || {})
  if (!reasons.length) return html`<p class="empty errors">No URL of this run failed.</p>`
  const reasonOf = (k) => (k.startsWith('http_') ? 'http_status' : k === 'left_queued' ? '' : k)
  return html`<${Table}
    name="errors"
    rows=${reasons}
    attrs=${([k]) => ({ 'data-reason': k })}
    columns=${[
      ['Reason', ([k]) => (reasonOf(k) ? html`<a href=${`#/runs/${run.id}/logs?error_reasons=${reasonOf(k)}`}>${k}</a>` : k)],
      ['URLs', ([, n]) => n, 'num'],
    ]}
  />`
}

function Stat({ label, value, name }) {
  return html`<div class="stat" data-stat=${name}><span class="label">${label}</span><b>${value}</b></div>`
}

export function RunPage({ id, tab }) {
  const rates = useRates()
  const run = useLoad(async () => rates([await get(`/v1/runs/${id}`)])[0], [id], POLL_MS)
  const r = run.data
  if (!r) return html`<section>${problem(run.error) || html`<p>Loading…</p>`}</section>`
  return html`<section class="run" data-status=${r.status}>
    <div class="bar">
      <h2>Run ${short(r.id)}</h2>
      ${pill(r.status)}
      <${RunControls} run=${r} onChange=${run.reload} />
    </div>
    ${problem(run.error)}
    <div class="stats">
      <${Stat} name="rate" label="Pages/s" value=${r.rate.toFixed(1)} />
      <${Stat} name="queued" label="Queued" value=${r.stats.queued} />
      <${Stat} name="visited" label="Visited" value=${r.stats.visited} />
      <${Stat} name="failed" label="Failed" value=${r.stats.failed} />
      <${Stat} name="bytes" label="Bytes" value=${bytes(r.stats.bytes)} />
      <${Stat} name="outcome" label="Outcome" value=${endOf(r) || '—'} />
      <${Stat} name="started" label="Started" value=${when(r.started_at)} />
      <${Stat} name="job" label="Job" value=${html`<a href=${`#/jobs/${r.job_id}`}>${short(r.job_id)}</a>`} />
    </div>
    <nav class="tabs">${TABS.map(([k, label]) => html`<a href=${`#/runs/${id}/${k}`} class=${tab === k ? 'active' : ''}>${label}</a>`)}</nav>
    ${
      tab === 'overview' &&
      html`<${Charts} run=${r} />
        <h3>Errors by reason</h3>
        <${Errors} run=${r} />`
    }
    ${tab === 'pages' && html`<${RunPages} run=${r} />`} ${tab === 'logs' && html`<${RunLogs} run=${r} />`} ${tab === 'graph' && html`<${RunGraph} run=${r} />`}
  </section>`
}
