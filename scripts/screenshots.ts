// Writes the PNG screenshots of docs/dashboard.md (docs/screenshots/): the compiled binary
// (dist/trawl: `bun scripts/build.ts` first) crawling the browser test's fixture site, the
// dashboard driven in headless Chromium through each page, at 1280x800 and at a 390 px phone
// width. Not part of the test run: `bun scripts/screenshots.ts`.
import { mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { cleanup, startTrawl } from '../test/helpers/binary'
import { openBrowser } from '../test/helpers/chromium'
import { dashboardSite } from '../test/dashboard/site'
import { webhookReceiver } from '../test/helpers/webhook-receiver'

const OUT = join(import.meta.dir, '../docs/screenshots')
mkdirSync(OUT, { recursive: true })
const T = { tenant: 'acme' }

const site = dashboardSite(400)
const receiver = webhookReceiver()
const trawl = await startTrawl({ env: { TRAWL_ALLOW_PRIVATE_NETWORKS: 'true' } })
const page = await openBrowser()
try {
  const shot = async (name: string) => {
    await Bun.sleep(300) // the last poll's answer drawn
    await page.screenshot(join(OUT, `${name}.png`))
    console.log(`docs/screenshots/${name}.png`)
  }
  const go = (hash: string) => page.evaluate(`location.hash = ${JSON.stringify(hash)}`)
  const waitRun = (status: string) => page.waitFor(`the run ${status}`, `document.querySelector('section.run')?.dataset.status === '${status}'`, 20_000)
  await page.size(1280, 800)

  await page.goto(`${trawl.managementUrl}/`)
  await page.fill('input[name=tenant]', 'acme')
  await shot('tenant')
  await page.click('.tenant-form button[type=submit]')

  // A webhook for every job, made before the runs so their moves are delivered; the receiver
  // verifies with the secret the page shows once.
  await go('#/webhooks')
  await page.fill('input[name=url]', receiver.url('/trawl'))
  await page.click('input[name=events][value="run.started"]')
  await page.click('.webhook-form button[type=submit]')
  receiver.trust(await page.waitFor<string>('the secret', `document.querySelector('.new-secret input[name=secret-created]')?.value`))
  const webhookId = (await trawl.api.get('/v1/webhooks', T)).body.data[0].id as string

  // The job form, first with what the API refuses.
  await go('#/jobs/new')
  await page.fill('input[name=name]', 'fixture site')
  await page.fill('textarea[name=seeds]', 'example.com/docs')
  await page.fill('input[name=max_depth]', '-1')
  await page.fill('textarea[name=rest]', JSON.stringify({ fetch: { timeout: '10s' } }, null, 2))
  await page.click('button[value=save]')
  await page.waitFor('the 422', `!!document.querySelector('[data-error-for="config.seeds"]')`)
  await shot('job-form-422')
  await page.fill('textarea[name=seeds]', `${site.origin}/`)
  await page.fill('input[name=max_depth]', '2')
  await page.click('button[value=run]')
  await waitRun('finished')
  const runId = /#\/runs\/([0-9a-f-]+)/.exec(await page.evaluate<string>('location.hash'))![1]!
  await page.waitFor('the charts', `document.querySelectorAll('figure.chart svg').length === 2`)
  await shot('run')

  // A second run, on the slow pages, crawling while the list is shown; its run.started finds the
  // receiver down once, and is delivered on the next attempt.
  receiver.down()
  const slow = await trawl.api.post('/v1/jobs?create_run=true', { name: 'slow pages', config: { seeds: [`${site.origin}/slow/0`], limits: { max_depth: 1000 }, politeness: { concurrency: 1 } } }, T)
  const refused = async () => ((await trawl.api.get(`/v1/webhooks/${webhookId}/deliveries`, T)).body.data as { attempts: { error: string | null }[] }[]).some((d) => d.attempts.some((a) => a.error))
  for (let i = 0; i < 100 && !(await refused()); i++) await Bun.sleep(50)
  receiver.up()
  await go('#/runs')
  await page.waitFor('the slow run crawling', `[...document.querySelectorAll('table.runs td[data-label=Visited]')].some((td) => Number(td.textContent) >= 3)`, 20_000)
  await shot('runs')
  await go('#/jobs')
  await page.waitFor('the jobs', `document.querySelectorAll('table.jobs tbody tr').length === 2`)
  await shot('jobs')

  await go(`#/runs/${runId}/pages`)
  await page.click(`li[data-url="${site.origin}/alpha"] button`)
  await page.waitFor('the markdown', `document.querySelector('[data-view=markdown]')?.textContent.includes('alpha page')`)
  await shot('run-pages')
  await go(`#/runs/${runId}/logs`)
  await page.waitFor('log rows', `document.querySelectorAll('table.logs tbody tr').length > 0`)
  await page.click('input[name="steps:fetch"]')
  await page.waitFor('fetches only', `[...document.querySelectorAll('table.logs tbody tr')].every((r) => r.dataset.step === 'fetch')`)
  await shot('run-logs')
  await go(`#/runs/${runId}/graph`)
  await page.click('.run-graph ul.pages button')
  await page.waitFor('the edges', `document.querySelectorAll('[data-edges=children] li').length > 0`)
  await shot('run-graph')

  await go('#/artifacts')
  await page.waitFor('artifacts', `document.querySelectorAll('table.artifacts tbody tr').length > 0`)
  await shot('artifacts')

  await go('#/triggers')
  await page.fill('input[name=name]', 'nightly')
  await page.fill('input[name=expression]', '30 2 * * *')
  await page.fill('input[name=timezone]', 'Europe/Paris')
  await page.waitFor('the preview', `document.querySelectorAll('.next-at li').length === 5`)
  await shot('triggers')

  await go(`#/webhooks/${webhookId}`)
  await page.waitFor('three deliveries delivered', `[...document.querySelectorAll('table.deliveries tbody tr')].filter((r) => r.dataset.status === 'delivered').length === 3`, 20_000)
  await page.click('table.deliveries tbody tr:nth-child(2) details summary')
  await shot('webhooks')

  // A pattern set and a data map on the fixture's host, made through the API.
  const host = (await trawl.api.put('/v1/hosts', { hosts: ['127.0.0.1'] }, T)).body.data[0]
  await trawl.api.post(`/v1/hosts/${host.hash}/patterns`, { category: 'articles', patterns: { format: 'url_pattern', patterns: ['/alpha', '/beta', '/articles/:slug'] } }, T)
  await trawl.api.post(
    `/v1/hosts/${host.hash}/data_maps`,
    {
      schema_id: crypto.randomUUID(),
      map: {
        fields: [
          { name: 'title', selector: 'h1' },
          { name: 'text', selector: 'article p' },
        ],
      },
    },
    T,
  )
  await go('#/patterns')
  await page.click('ul.pages button')
  await page.fill('textarea[name=paths]', '/alpha\n/articles/hello-world\n/slow/1')
  await page.waitFor('the matches', `document.querySelectorAll('table.matches tbody tr').length === 3`)
  await shot('patterns')
  await go('#/data-maps')
  await page.click('ul.pages button')
  await page.fill('.apply input[name=url]', `${site.origin}/alpha`)
  await page.click('.apply button[type=submit]')
  await page.waitFor('the extracted JSON', `!!document.querySelector('[data-view=apply]')`)
  await shot('data-maps')
  await go('#/payments')
  await page.waitFor('the ledger', `!!document.querySelector('table.payments')`)
  await shot('payments')

  await page.size(390, 844, true)
  await go('#/runs')
  await page.waitFor('the runs', `document.querySelectorAll('table.runs tbody tr').length === 2`)
  await shot('phone-runs')
  await go(`#/runs/${runId}`)
  await waitRun('finished')
  await shot('phone-run')
  await trawl.api.put(`/v1/runs/${slow.body.run.id}/stop`, undefined, T)
  if (page.errors.length) console.error('the page logged errors:', page.errors)
} finally {
  await page.close()
  site.stop()
  receiver.stop()
  await trawl.stop()
  await cleanup()
}
