// The dashboard in a real browser: headless Chromium, driven over the DevTools protocol, on the
// compiled binary crawling a fixture site on 127.0.0.1. What a user does and sees: choose a
// tenant, create a job through the form (a 422 shown at its field first), watch its run finish,
// read a page's markdown and HTML, filter the log, pause and resume a run that is still crawling,
// and see a schedule's next five firings before saving it. Assertions are on what the page shows,
// checked against the API.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { cleanup, ensureBinary, startTrawl, type Trawl } from '../helpers/binary'
import { openBrowser, type BrowserPage } from '../helpers/chromium'
import { dashboardSite } from './site'

const TENANT = 'dash'
const T = { tenant: TENANT }
let trawl: Trawl
let page: BrowserPage
let site: ReturnType<typeof dashboardSite>

beforeAll(async () => {
  site = dashboardSite()
  await ensureBinary()
  ;[trawl, page] = await Promise.all([startTrawl({ env: { TRAWL_ALLOW_PRIVATE_NETWORKS: 'true' } }), openBrowser()])
  await page.size(1280, 800)
}, 120_000)
afterAll(async () => {
  await page?.close()
  site?.stop()
  await cleanup()
})

const UUID = '[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}'
const go = (hash: string) => page.evaluate(`location.hash = ${JSON.stringify(hash)}`)
/** The texts of a column of the table rows matching `rows`. */
const cells = (rows: string, label: string) => page.texts(`${rows} td[data-label="${label}"]`)
let runId = ''

describe('the dashboard, driven in Chromium', () => {
  test('the tenant is asked once and kept', async () => {
    await page.goto(`${trawl.managementUrl}/`)
    await page.fill('input[name=tenant]', 'not a tenant!')
    expect(await page.evaluate(`document.querySelector('.tenant-form button[type=submit]').disabled`)).toBe(true)
    await page.fill('input[name=tenant]', TENANT)
    await page.click('.tenant-form button[type=submit]')
    await page.waitFor('the header', `document.querySelector('header.top .tenant b')?.textContent === ${JSON.stringify(TENANT)}`)
    await page.goto(`${trawl.managementUrl}/#/jobs`)
    await page.waitFor('the jobs page without asking again', `!!document.querySelector('table.jobs') && !document.querySelector('.tenant-form')`)
    expect(await page.evaluate(`localStorage.getItem('trawl.tenant')`)).toBe(TENANT)
  })

  test('a job made through the form: 422s at their fields first, then created with a run that finishes', async () => {
    await go('#/jobs/new')
    await page.fill('input[name=name]', '')
    await page.fill('textarea[name=seeds]', 'not a url')
    await page.fill('input[name=max_depth]', '-1')
    await page.click('button[value=save]')
    await page.waitFor('the 422 at the seeds field', `!!document.querySelector('[data-error-for="config.seeds"]')`)
    // What the API answers to the same body, shown at the fields it names.
    const api = await trawl.api.post('/v1/jobs', { name: '', config: { seeds: ['not a url'], limits: { max_depth: -1, max_urls: 100 } } }, T)
    expect(api.status).toBe(422)
    const byField = Object.fromEntries((api.body.fields as { field: string; errors: string[] }[]).map((f) => [f.field, f.errors]))
    expect(await page.text('[data-error-for="name"]')).toBe(byField.name![0]!)
    expect(await page.text('[data-error-for="config.seeds"]')).toBe(`[0]: ${byField['config.seeds[0]']![0]}`)
    expect(await page.text('[data-error-for="config.limits.max_depth"]')).toBe(byField['config.limits.max_depth']![0]!)
    expect(Object.keys(byField).sort()).toEqual(['config.limits.max_depth', 'config.seeds[0]', 'name'])
    expect((await trawl.api.get('/v1/jobs', T)).body.data).toEqual([]) // nothing stored

    // The JSON editor's own check, shown at the editor as the API's are at their fields.
    await page.fill('input[name=name]', 'fixture')
    await page.fill('textarea[name=seeds]', `${site.origin}/`)
    await page.fill('input[name=max_depth]', '2')
    await page.fill('textarea[name=rest]', '{"scope":')
    await page.click('button[value=save]')
    const jsonError = await page.waitFor<string>('the JSON error', `document.querySelector('textarea[name=rest]')?.parentElement.querySelector('.error')?.textContent`)
    expect(jsonError).toStartWith('is not a JSON object: ')
    expect((await trawl.api.get('/v1/jobs', T)).body.data).toEqual([])

    await page.fill('input[name=name]', 'fixture')
    await page.fill('textarea[name=seeds]', `${site.origin}/`)
    await page.fill('input[name=max_depth]', '2')
    await page.fill('input[name=concurrency]', '2')
    await page.fill('textarea[name=rest]', JSON.stringify({ scope: { exclude: ['/slow/'] }, store: { raw: true } }))
    await page.click('button[value=run]')
    runId = (await page.waitFor<string>('the run page', `(location.hash.match(/^#\\/runs\\/(${UUID})$/) || [])[1]`))!
    const job = (await trawl.api.get('/v1/jobs', T)).body.data[0]
    expect(job.name).toBe('fixture')
    expect(job.config).toEqual({ seeds: [`${site.origin}/`], scope: { exclude: ['/slow/'] }, store: { raw: true }, limits: { max_depth: 2, max_urls: 100 }, politeness: { concurrency: 2 } })

    await page.waitFor('the run to show finished', `document.querySelector('section.run')?.dataset.status === 'finished'`, 20_000)
    const run = (await trawl.api.get(`/v1/runs/${runId}`, T)).body
    expect(run.stats.visited).toBe(4) // home, alpha, beta and the 404
    await page.waitFor('the final counts', `document.querySelector('[data-stat=visited] b').textContent === '4'`)
    expect(await page.text('[data-stat=visited] b')).toBe(String(run.stats.visited))
    expect(await page.text('[data-stat=failed] b')).toBe(String(run.stats.failed))
    expect(await page.text('[data-stat=outcome] b')).toBe(`${run.outcome} (${run.stop_reason})`)
    expect(await cells('table.errors tr[data-reason=http_404]', 'URLs')).toEqual(['1'])
    await page.waitFor('a bar of the fetch chart', `document.querySelectorAll('figure.chart svg rect').length > 0`)
  })

  test('a job edited through the form: the fields changed, the JSON kept', async () => {
    const job = (await trawl.api.get('/v1/jobs', T)).body.data[0]
    await go(`#/jobs/${job.id}`)
    await page.waitFor('the form filled in', `document.querySelector('input[name=max_urls]')?.value === '100'`)
    expect(JSON.parse((await page.evaluate<string>(`document.querySelector('textarea[name=rest]').value`))!)).toEqual({ scope: { exclude: ['/slow/'] }, store: { raw: true } })
    await page.fill('input[name=max_urls]', '50')
    await page.fill('input[name=name]', 'fixture, edited')
    await page.click('button[value=save]')
    await page.waitFor('the jobs list', `location.hash === '#/jobs' && !!document.querySelector('table.jobs tbody tr')`)
    const edited = (await trawl.api.get(`/v1/jobs/${job.id}`, T)).body
    expect(edited.name).toBe('fixture, edited')
    expect(edited.config).toEqual({ ...job.config, limits: { max_depth: 2, max_urls: 50 } })
    expect(await cells('table.jobs tbody tr', 'Name')).toEqual(['fixture, edited'])
  })

  test("a page's markdown and HTML", async () => {
    await go(`#/runs/${runId}/pages`)
    await page.click(`li[data-url="${site.origin}/alpha"] button`)
    const markdown = await page.waitFor<string>(
      'the markdown',
      `document.querySelector('[data-view=markdown]')?.textContent.includes('alpha page says') && document.querySelector('[data-view=markdown]').textContent`,
    )
    expect(markdown).toContain('The alpha page says hello from the fixture site.')
    expect(markdown).toContain('# Alpha')
    await page.click('button[name=view-html]')
    const source = await page.waitFor<string>('the HTML source', `document.querySelector('[data-view=html]')?.textContent.includes('<h1>') && document.querySelector('[data-view=html]').textContent`)
    expect(source).toContain('<h1>Alpha</h1><p>The alpha page says hello from the fixture site.</p>')
  })

  test("the link graph: a seed's children and parents, as /edges has them", async () => {
    await go(`#/runs/${runId}/graph`)
    await page.click('.run-graph ul.pages button', `${site.origin}/`)
    await page.waitFor('the edges', `document.querySelectorAll('[data-edges=children] li').length > 0`)
    const edges = (await trawl.api.get(`/v1/runs/${runId}/edges?per_page=100`, T)).body.data as { parent: { url: string }; child: { url: string } }[]
    const home = `${site.origin}/`
    expect(await page.texts('[data-edges=children] li')).toEqual(edges.filter((e) => e.parent.url === home).map((e) => e.child.url))
    expect(await page.texts('[data-edges=parents] li')).toEqual(edges.filter((e) => e.child.url === home).map((e) => e.parent.url))
    expect(await page.texts('[data-edges=children] li')).toEqual([`${site.origin}/alpha`, `${site.origin}/beta`, `${site.origin}/missing`])
  })

  test('the log, filtered by status and by step, lists what the API lists', async () => {
    await go(`#/runs/${runId}/logs`)
    await page.waitFor('log rows', `document.querySelectorAll('table.logs tbody tr').length > 0`)
    const urlsOf = async (query: string) => ((await trawl.api.get(`/v1/runs/${runId}/logs?per_page=50&${query}`, T)).body.data as { url: string }[]).map((e) => e.url)

    await page.click('input[name="statuses:error"]')
    await page.waitFor('only errors', `[...document.querySelectorAll('table.logs tbody tr')].every((r) => r.dataset.status === 'error')`)
    const errors = await urlsOf('statuses=error')
    expect(errors).toContain(`${site.origin}/missing`)
    await page.waitFor('the error rows', `document.querySelectorAll('table.logs tbody tr').length === ${errors.length}`)
    expect(await cells('table.logs tbody tr', 'URL')).toEqual(errors)

    await page.click('input[name="statuses:error"]')
    await page.click('input[name="steps:fetch"]')
    const fetches = await urlsOf('steps=fetch')
    expect(fetches.length).toBe(4)
    await page.waitFor(
      'only fetches',
      `[...document.querySelectorAll('table.logs tbody tr')].every((r) => r.dataset.step === 'fetch') && document.querySelectorAll('table.logs tbody tr').length === 4`,
    )
    expect(await cells('table.logs tbody tr', 'URL')).toEqual(fetches)
  })

  test('pause and resume a run that is still crawling, then stop it', async () => {
    const created = await trawl.api.post('/v1/jobs?create_run=true', { name: 'slow', config: { seeds: [`${site.origin}/slow/0`], limits: { max_depth: 1000 }, politeness: { concurrency: 1 } } }, T)
    const id = created.body.run.id as string
    await go(`#/runs/${id}`)
    const status = async () => (await trawl.api.get(`/v1/runs/${id}`, T)).body.status
    await page.waitFor('the run to run', `document.querySelector('section.run')?.dataset.status === 'running'`, 10_000)
    await page.click('button[name=pause]')
    await page.waitFor('paused', `document.querySelector('section.run')?.dataset.status === 'paused'`)
    expect(await status()).toBe('paused')
    await page.click('button[name=resume]')
    await page.waitFor('running again', `document.querySelector('section.run')?.dataset.status === 'running'`)
    expect(await status()).toBe('running')
    await page.click('button[name=stop]')
    await page.waitFor('stopped', `document.querySelector('[data-stat=outcome] b')?.textContent === 'stopped (manual)'`)
    expect(await status()).toBe('finished')
  })

  test('a schedule shows its next five firings before it is saved, and a bad expression at its field', async () => {
    await go('#/triggers')
    await page.fill('input[name=name]', 'every ten minutes')
    await page.fill('input[name=expression]', '* * *')
    await page.waitFor('the preview 422', `!!document.querySelector('[data-error-for="condition.params.expression"]')`)
    expect(await page.text('[data-error-for="condition.params.expression"]')).toBe('must have 5 fields (minute hour day-of-month month day-of-week) or 6 (seconds first), got 3')

    const before = Date.now()
    await page.fill('input[name=expression]', '*/10 * * * *')
    const shown = await page.waitFor<string[]>('five firings', `document.querySelectorAll('.next-at li').length === 5 && [...document.querySelectorAll('.next-at li')].map((li) => li.dataset.at)`)
    // Worked out here: the next multiples of ten minutes after the preview was asked for.
    const tenMinutes = 600_000
    const from = (t: number) => Array.from({ length: 5 }, (_, i) => new Date((Math.floor(t / tenMinutes) + 1 + i) * tenMinutes).toISOString())
    expect([from(before), from(Date.now())]).toContainEqual(shown)

    await page.click('.trigger-form button[type=submit]')
    await page.waitFor('the new trigger listed', `[...document.querySelectorAll('table.triggers td[data-label=Name]')].some((td) => td.textContent === 'every ten minutes')`)
    const listed = (await trawl.api.get('/v1/triggers', T)).body.data
    expect(listed.map((t: { name: string; condition: unknown }) => [t.name, t.condition])).toEqual([['every ten minutes', { kind: 'schedule', params: { expression: '*/10 * * * *' } }]])
  })

  test('an on_finish trigger for some finishes only: the ticked stop reasons and outcomes are what is saved', async () => {
    await go('#/triggers')
    await page.fill('input[name=name]', 'again when aged out')
    await page.evaluate(`(() => { const s = document.querySelector('select[name=kind]'); s.value = 'on_finish'; s.dispatchEvent(new Event('change', { bubbles: true })) })()`)
    await page.waitFor('the on_finish choices', `document.querySelectorAll('input[name=stop_reasons]').length === 7`)
    await page.click('input[name=stop_reasons][value=max_age]')
    await page.click('input[name=stop_reasons][value=max_urls]')
    await page.click('input[name=outcomes][value=limited]')
    await page.click('.trigger-form button[type=submit]')
    await page.waitFor('the new trigger listed', `[...document.querySelectorAll('table.triggers td[data-label=Name]')].some((td) => td.textContent === 'again when aged out')`)
    const row = `table.triggers tr:has(td[data-label=Name])`
    const described = (await cells(row, 'Condition'))[(await cells(row, 'Name')).indexOf('again when aged out')]
    expect(described).toBe('on finish, stopped for max_urls or max_age, outcome limited')
    const saved = (await trawl.api.get('/v1/triggers', T)).body.data.find((t: { name: string }) => t.name === 'again when aged out')
    // Ticked in another order, saved in the order of the list.
    expect(saved.condition).toEqual({ kind: 'on_finish', params: { stop_reasons: ['max_urls', 'max_age'], outcomes: ['limited'] } })
  })

  test('a pattern set made through the form (a 422 at its field first), then paths matched as they are typed', async () => {
    await go('#/patterns')
    await page.fill('input[name=domain]', 'shop.example')
    await page.fill('textarea[name=patterns]', '/p/(')
    await page.click('form.card button[type=submit]', 'Create')
    const problem = await page.waitFor<string>('the 422 at the patterns', `document.querySelector('[data-error-for="patterns.patterns"]')?.textContent`)
    const refused = await trawl.api.post(
      '/v1/hosts/' + (await trawl.api.put('/v1/hosts', { hosts: ['shop.example'] }, T)).body.data[0].hash + '/patterns',
      { category: 'articles', patterns: { format: 'url_pattern', patterns: ['/p/('] } },
      T,
    )
    expect(refused.status).toBe(422)
    expect(problem).toBe(`[0]: ${refused.body.fields[0].errors[0]}`)
    expect((await trawl.api.get('/v1/patterns', T)).body.data).toEqual([])

    await page.fill('textarea[name=patterns]', '/p/:id')
    await page.click('form.card button[type=submit]', 'Create')
    await page.waitFor('the new set opened', `!!document.querySelector('.matcher textarea[name=paths]')`)
    const [set] = (await trawl.api.get('/v1/patterns', T)).body.data
    expect(set).toMatchObject({ category: 'articles', host: { domain: 'shop.example' }, patterns: { format: 'url_pattern', patterns: ['/p/:id'] } })
    await page.fill('.matcher textarea[name=paths]', '/p/42\n/about')
    await page.waitFor('both paths', `document.querySelectorAll('table.matches tbody tr').length === 2`)
    const api = (await trawl.api.post(`/v1/patterns/${set.id}/match`, { paths: ['/p/42', '/about'] }, T)).body.results as { matched: boolean }[]
    expect(await cells('table.matches tbody tr', 'Matched')).toEqual(api.map((r) => (r.matched ? 'yes' : 'no')))
    expect(await cells('table.matches tbody tr', 'Matched')).toEqual(['yes', 'no'])
  })

  test('a data map made through the form (422s at its fields first), applied to a page as the API applies it, then deleted', async () => {
    await go('#/data-maps')
    await page.fill('.data-map-form input[name=domain]', 'shop.example')
    await page.fill('.data-map-form textarea[name=fields]', '[{"name": "title",')
    await page.click('.data-map-form button[type=submit]', 'Create')
    const notJson = await page.waitFor<string>('the JSON error', `document.querySelector('[data-error-for="map.fields"]')?.textContent`)
    expect(notJson).toStartWith('is not a JSON array: ')

    // A field without its selector: the API's 422, shown at the fields editor.
    await page.fill('.data-map-form textarea[name=fields]', '[{"name": "title"}]')
    await page.click('.data-map-form button[type=submit]', 'Create')
    await page.waitFor('the API 422', `document.querySelector('[data-error-for="map.fields"]')?.textContent.startsWith('[0]')`)
    const host = (await trawl.api.put('/v1/hosts', { hosts: ['shop.example'] }, T)).body.data[0]
    const refused = await trawl.api.post(`/v1/hosts/${host.hash}/data_maps`, { schema_id: crypto.randomUUID(), map: { fields: [{ name: 'title' }] } }, T)
    expect(refused.status).toBe(422)
    const shown = await page.texts('[data-error-for="map.fields"]')
    expect(shown).toEqual((refused.body.fields as { field: string; errors: string[] }[]).flatMap((f) => f.errors.map((e) => `${f.field.slice('map.fields'.length)}: ${e}`)))
    expect((await trawl.api.get('/v1/data_maps', T)).body.data).toEqual([])

    const fields = [
      { name: 'title', selector: 'h1' },
      { name: 'cells', selector: 'td', multiple: true },
    ]
    await page.fill('.data-map-form textarea[name=fields]', JSON.stringify(fields))
    // As over plain http to a VM's address, where browsers leave randomUUID out (127.0.0.1 is a secure context).
    await page.evaluate('delete Crypto.prototype.randomUUID')
    await page.click('.data-map-form button[type=submit]', 'Create')
    await page.waitFor('the new map opened', `!!document.querySelector('.apply input[name=url]')`)
    const [map] = (await trawl.api.get('/v1/data_maps', T)).body.data
    expect(map).toMatchObject({ host: { domain: 'shop.example' }, map: { fields } })
    expect(map.schema_id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/) // a new random one

    await page.fill('.apply input[name=url]', `${site.origin}/beta`)
    await page.click('.apply button[type=submit]', 'Apply')
    const applied = JSON.parse(await page.waitFor<string>('the extracted JSON', `document.querySelector('pre[data-view=apply]')?.textContent`))
    const api = (await trawl.api.post(`/v1/data_maps/${map.id}/apply`, { url: `${site.origin}/beta` }, T)).body
    expect(applied).toEqual(api)
    expect(applied).toEqual({ data: { title: 'Beta', cells: ['one', '1'] }, errors: [] })

    await page.evaluate('window.confirm = () => true')
    await page.click('.apply button.danger', 'Delete')
    await page.waitFor('the map gone', `!document.querySelector('.apply') && document.querySelector('ul.pages li.empty')?.textContent === 'No data maps.'`)
    expect((await trawl.api.get('/v1/data_maps', T)).body.data).toEqual([])
  })

  test('on a 390 px phone the runs page fits the width; the page logged no error', async () => {
    await page.size(390, 844, true)
    await go('#/runs')
    await page.waitFor('the runs as cards', `document.querySelectorAll('table.runs tbody tr').length === 2`)
    expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(390)
    await page.size(1280, 800)
    expect(page.errors).toEqual([])
  })
})
