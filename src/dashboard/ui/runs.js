// Runs: the list with live progress (polled), and the controls a run page shares.
import { html, useRef, useState } from './html.js'
import { download, get, hashParams, put, qs, useLoad, usePaged } from './api.js'
import { bytes, pill, problem, short, when } from './format.js'
import { Table } from './table.js'

export const POLL_MS = 1500

/**
 * Sets each run's `rate`, pages a second: over the last two polls while it is crawled, else its
 * average over its running time. The hook keeps each run's previous poll.
 */
export function useRates() {
  const seen = useRef(new Map())
  return (runs) => {
    const now = Date.now()
    for (const run of runs) {
      const before = seen.current.get(run.id)
      const start = Date.parse(run.started_at)
      const end = run.finished_at ? Date.parse(run.finished_at) : now
      run.rate =
        run.status === 'running' && before
          ? ((run.stats.visited - before.visited) * 1000) / Math.max(1, now - before.at)
          : start && end > start && run.status !== 'pending'
            ? (run.stats.visited * 1000) / (end - start)
            : 0
      seen.current.set(run.id, { at: now, visited: run.stats.visited })
    }
    return runs
  }
}

/** Pause, resume, stop and export: the moves the run's state allows. */
export function RunControls({ run, onChange }) {
  const [failure, setFailure] = useState(null)
  const act = async (f) => {
    setFailure(null)
    try {
      await f()
      onChange?.()
    } catch (err) {
      setFailure(err)
    }
  }
  const move = (m) => act(() => put(`/v1/runs/${run.id}/${m}`))
  return html`<span class="controls">
    ${run.status === 'running' && html`<button name="pause" onClick=${() => move('pause')}>Pause</button>`}
    ${run.status === 'paused' && html`<button name="resume" onClick=${() => move('resume')}>Resume</button>`}
    ${run.status !== 'finished' && html`<button name="stop" class="danger" onClick=${() => move('stop')}>Stop</button>`}
    <button name="export" onClick=${() => act(() => download(`/v1/runs/${run.id}/export`, `run-${run.id}.jsonl`))}>Export</button>
    ${failure && html`<span class="problem">${failure.message}</span>`}
  </span>`
}

export const endOf = (run) => (run.status === 'finished' ? `${run.outcome ?? '—'} (${run.stop_reason ?? '—'})` : '')

export function Runs() {
  const job = hashParams().get('job')
  const rates = useRates()
  const runs = usePaged(`/v1/runs${qs({ per_page: 50, job_ids: job })}`, [], POLL_MS, (page) => ({ ...page, data: rates(page.data) }))
  const jobs = useLoad(() => get('/v1/jobs?per_page=100'), [])
  const names = Object.fromEntries((jobs.data?.data || []).map((j) => [j.id, j.name]))
  const rows = runs.rows
  return html`<section>
    <div class="bar">
      <h2>Runs${job ? ` of ${names[job] ?? short(job)}` : ''}</h2>
      ${job && html`<a href="#/runs">all runs</a>`}
    </div>
    ${problem(runs.error)}
    <${Table}
      name="runs"
      rows=${rows}
      attrs=${(r) => ({ 'data-id': r.id })}
      columns=${[
        ['Run', (r) => html`<a href=${`#/runs/${r.id}`}>${short(r.id)}</a>`],
        ['Job', (r) => names[r.job_id] ?? short(r.job_id)],
        ['Status', (r) => pill(r.status), 'status'],
        ['Pages/s', (r) => r.rate.toFixed(1), 'num'],
        ['Queued', (r) => r.stats.queued, 'num queued'],
        ['Visited', (r) => r.stats.visited, 'num visited'],
        ['Failed', (r) => r.stats.failed, 'num failed'],
        ['Bytes', (r) => bytes(r.stats.bytes), 'num'],
        ['Outcome', (r) => endOf(r), 'outcome'],
        ['Created', (r) => when(r.created_at)],
        [null, (r) => html`<${RunControls} run=${r} onChange=${runs.reload} />`],
      ]}
    />
    ${runs.loaded && !rows.length && html`<p class="empty">No runs. Start one from <a href="#/jobs">a job</a>.</p>`} ${runs.next && html`<button onClick=${runs.more}>More</button>`}
  </section>`
}
