// Jobs: the list (start a run, edit, delete) and the create/edit page.
import { html } from './html.js'
import { del, get, post, useLoad, usePaged } from './api.js'
import { problem, when } from './format.js'
import { JobForm } from './job-form.js'
import { Table } from './table.js'

export function Jobs() {
  const jobs = usePaged('/v1/jobs?per_page=50', [])
  const act = async (what) => {
    try {
      await what()
      jobs.reload()
    } catch (err) {
      alert(err.message)
    }
  }
  const run = (job) =>
    act(async () => {
      const r = await post(`/v1/jobs/${job.id}/runs`)
      location.hash = `#/runs/${r.id}`
    })
  return html`<section>
    <div class="bar">
      <h2>Jobs</h2>
      <a class="button" href="#/jobs/new">New job</a>
    </div>
    ${problem(jobs.error)}
    <${Table}
      name="jobs"
      rows=${jobs.rows}
      attrs=${(j) => ({ 'data-id': j.id })}
      columns=${[
        ['Name', (j) => html`<a href=${`#/jobs/${j.id}`}>${j.name}</a>`],
        ['Seeds', (j) => (j.config.seeds || []).join(' '), 'url'],
        ['Created', (j) => when(j.created_at)],
        [
          null,
          (j) =>
            html`<button onClick=${() => run(j)}>Run</button>
              <a class="button" href=${`#/runs?job=${j.id}`}>Runs</a>
              <button class="danger" onClick=${() => confirm(`Delete job ${j.name} and all its runs?`) && act(() => del(`/v1/jobs/${j.id}`))}>Delete</button>`,
        ],
      ]}
    />
    ${jobs.loaded && !jobs.rows.length && html`<p class="empty">No jobs yet. <a href="#/jobs/new">Create one</a>.</p>`} ${jobs.next && html`<button onClick=${jobs.more}>More</button>`}
  </section>`
}

export function JobEdit({ id }) {
  const job = useLoad(() => (id ? get(`/v1/jobs/${id}`) : Promise.resolve(null)), [id])
  const saved = (j, run) => (location.hash = run ? `#/runs/${run.id}` : '#/jobs')
  return html`<section>
    <div class="bar"><h2>${id ? `Job ${job.data?.name ?? ''}` : 'New job'}</h2></div>
    ${problem(job.error)} ${(!id || job.data) && html`<${JobForm} key=${id || 'new'} job=${job.data} onSaved=${saved} />`}
  </section>`
}
