// Triggers: the list (enable, disable, delete) and a create form that shows a schedule's next
// five firing times before it is saved (POST /v1/triggers/preview, create's checks).
import { html, useEffect, useState } from './html.js'
import { ApiError, del, get, post, put, useLoad } from './api.js'
import { Choices, Field, OtherErrors, useSubmit } from './form.js'
import { problem, short, when } from './format.js'
import { RUN_OUTCOMES, STOP_REASONS } from './vocabulary.js'
import { Table } from './table.js'

/** The lists an on_finish condition may narrow its finishes by: param, what it is, its values. */
const FINISH_FILTERS = [
  ['stop_reasons', 'stop reasons', STOP_REASONS],
  ['outcomes', 'outcomes', RUN_OUTCOMES],
]

const onFinishText = (p) =>
  ['on finish', p.stop_reasons && `stopped for ${p.stop_reasons.join(' or ')}`, p.outcomes && `outcome ${p.outcomes.join(' or ')}`, p.delay && `after ${p.delay}`].filter(Boolean).join(', ')
const describe = (c) => (c.kind === 'schedule' ? `${c.params.expression}${c.params.timezone ? ` (${c.params.timezone})` : ' (UTC)'}` : onFinishText(c.params))

function conditionOf(f) {
  if (f.kind === 'on_finish') {
    // An empty choice is no filter: the trigger fires for any finish.
    const params = { ...(f.delay ? { delay: f.delay } : {}), ...(f.stop_reasons.length ? { stop_reasons: f.stop_reasons } : {}), ...(f.outcomes.length ? { outcomes: f.outcomes } : {}) }
    return { kind: 'on_finish', params }
  }
  return { kind: 'schedule', params: { expression: f.expression, ...(f.timezone ? { timezone: f.timezone } : {}) } }
}

function TriggerForm({ jobs, onCreated }) {
  const [f, setF] = useState({ job: '', name: '', kind: 'schedule', expression: '0 * * * *', timezone: '', delay: '', stop_reasons: [], outcomes: [] })
  const [preview, setPreview] = useState({ next: null, errors: null })
  const { errors, failure, send } = useSubmit()
  const set = (k) => (e) => setF({ ...f, [k]: e.target.value })
  const condition = conditionOf(f)
  const key = JSON.stringify(condition)
  useEffect(() => {
    let live = true
    const timer = setTimeout(async () => {
      try {
        const r = await post('/v1/triggers/preview', { condition })
        if (live) setPreview({ next: r.next_at, errors: null })
      } catch (err) {
        if (live) setPreview({ next: null, errors: err instanceof ApiError ? err.fields : { condition: [err.message] } })
      }
    }, 250)
    return () => {
      live = false
      clearTimeout(timer)
    }
  }, [key])
  const job = f.job || jobs[0]?.id || ''
  const submit = (e) => {
    e.preventDefault()
    void send(
      () => post(`/v1/jobs/${job}/triggers`, { name: f.name, condition }),
      () => onCreated(),
    )
  }
  const shown = errors || preview.errors
  return html`<form class="trigger-form card" onSubmit=${submit} novalidate>
    <h3>New trigger</h3>
    <div class="grid">
      <${Field} label="Job" path="job_id" errors=${errors}>
        <select name="job" value=${job} onChange=${set('job')}>
          ${jobs.map((j) => html`<option value=${j.id}>${j.name}</option>`)}
        </select>
      <//>
      <${Field} label="Name" path="name" errors=${errors}><input name="name" value=${f.name} onInput=${set('name')} /><//>
      <${Field} label="Kind" path="condition.kind" errors=${shown}>
        <select name="kind" value=${f.kind} onChange=${set('kind')}>
          <option value="schedule">schedule (cron)</option>
          <option value="on_finish">on finish of a run</option>
        </select>
      <//>
      ${
        f.kind === 'schedule'
          ? html`<${Field} label="Cron expression" path="condition.params.expression" errors=${shown} hint="5 fields (minute first) or 6 (seconds first); @hourly, @daily…"
                ><input name="expression" class="code" value=${f.expression} onInput=${set('expression')}
              /><//>
              <${Field} label="Time zone" path="condition.params.timezone" errors=${shown}><input name="timezone" value=${f.timezone} onInput=${set('timezone')} placeholder="UTC" /><//>`
          : html`<${Field} label="Delay" path="condition.params.delay" errors=${shown}><input name="delay" value=${f.delay} onInput=${set('delay')} placeholder="0s" /><//> ${FINISH_FILTERS.map(
                ([name, what, all]) =>
                  html`<${Choices}
                    legend=${`Only for ${what} (none ticked: any)`}
                    name=${name}
                    path=${`condition.params.${name}`}
                    all=${all}
                    chosen=${f[name]}
                    errors=${shown}
                    onChange=${(v) => setF({ ...f, [name]: v })}
                  />`,
              )}`
      }
    </div>
    ${
      f.kind === 'schedule' &&
      preview.next &&
      html`<div class="preview">
        <span class="label">Next firings</span>
        <ol class="next-at">
          ${preview.next.map((t) => html`<li data-at=${t}>${when(t)}</li>`)}
        </ol>
      </div>`
    }
    <${OtherErrors} errors=${errors} shown=${['name', 'job_id', 'condition']} />
    ${problem(failure)}
    <button type="submit" disabled=${!jobs.length}>Create trigger</button>
  </form>`
}

export function Triggers() {
  const triggers = useLoad(() => get('/v1/triggers?per_page=100'), [])
  const jobs = useLoad(() => get('/v1/jobs?per_page=100'), [])
  const names = Object.fromEntries((jobs.data?.data || []).map((j) => [j.id, j.name]))
  const act = (f) => f().then(triggers.reload, (err) => alert(err.message))
  return html`<section>
    <div class="bar"><h2>Triggers</h2></div>
    ${problem(triggers.error)}
    <${Table}
      name="triggers"
      rows=${triggers.data?.data || []}
      attrs=${(t) => ({ 'data-id': t.id })}
      columns=${[
        ['Name', (t) => t.name],
        ['Job', (t) => names[t.job_id] ?? short(t.job_id)],
        ['Condition', (t) => describe(t.condition), 'code'],
        ['Enabled', (t) => (t.enabled ? 'yes' : 'no')],
        ['Last fired', (t) => when(t.last_executed_at)],
        [
          null,
          (t) =>
            html`<button onClick=${() => act(() => put(`/v1/triggers/${t.id}/${t.enabled ? 'disable' : 'enable'}`))}>${t.enabled ? 'Disable' : 'Enable'}</button>
              <button class="danger" onClick=${() => confirm(`Delete trigger ${t.name}?`) && act(() => del(`/v1/triggers/${t.id}`))}>Delete</button>`,
        ],
      ]}
    />
    ${triggers.data && !triggers.data.data.length && html`<p class="empty">No triggers.</p>`} ${jobs.data && html`<${TriggerForm} jobs=${jobs.data.data} onCreated=${triggers.reload} />`}
  </section>`
}
