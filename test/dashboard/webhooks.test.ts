// The dashboard's webhooks page in headless Chromium, on the compiled binary: a webhook made
// through the form (a 422 at its URL first), its secret shown once, a crawl of the fixture site
// delivered to a verifying receiver on 127.0.0.1, the deliveries and their attempts as the API
// lists them, a failed delivery retried, enable and disable. A binary, a browser and a fixture
// site of its own: nothing is shared with dashboard.test.ts.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { cleanup, ensureBinary, startTrawl, tempDir, type Trawl } from '../helpers/binary'
import { writeStore } from '../helpers/binary-engine'
import { openBrowser, type BrowserPage } from '../helpers/chromium'
import { presetTenant } from './tenant'
import { webhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver'
import { GIVE_UP_MS } from '../../src/store/webhook-model'
import { generateSecret } from '../../src/webhooks/signature'
import { dashboardSite } from './site'

const TENANT = 'hooks'
const T = { tenant: TENANT }
let trawl: Trawl
let page: BrowserPage
let site: ReturnType<typeof dashboardSite>
let receiver: WebhookReceiver
/** A webhook whose one delivery failed for a day before the binary started (written in beforeAll). */
const gaveUp = { webhook: crypto.randomUUID(), job: crypto.randomUUID(), run: crypto.randomUUID(), delivery: '', secret: generateSecret() }

beforeAll(async () => {
  site = dashboardSite()
  receiver = webhookReceiver()
  receiver.trust(gaveUp.secret)
  const dataDir = tempDir()
  ;[page] = await Promise.all([
    openBrowser(),
    ensureBinary(),
    // Its day of retries cannot pass in a test: the attempt that ended it is recorded through the
    // store, at the day's end, as the deliverer would record it.
    writeStore(dataDir, async (store) => {
      await store.jobs.create(TENANT, { id: gaveUp.job, name: 'gave up', config: { seeds: [`${site.origin}/`] }, labels: {} }, { id: gaveUp.run, config: {} })
      await store.webhooks.create(TENANT, { id: gaveUp.webhook, job_id: gaveUp.job, url: receiver.url('/late'), events: ['run.finished'], secret: gaveUp.secret, enabled: true, description: null })
      await store.runs.move(TENANT, gaveUp.run, 'stop')
      const [due] = await store.webhooks.claim('setup', Date.now(), 60_000, 10)
      const end = due!.created_at + GIVE_UP_MS
      await store.webhooks.record('setup', due!, { at: end - 12, duration_ms: 12, status_code: null, error: 'connect: connection refused', delivered: false }, end)
      gaveUp.delivery = due!.id
    }),
  ])
  trawl = await startTrawl({ dataDir, env: { TRAWL_ALLOW_PRIVATE_NETWORKS: 'true' } })
  await page.size(1280, 800)
  await presetTenant(page, trawl.managementUrl, TENANT)
}, 120_000)
afterAll(async () => {
  await page?.close()
  site?.stop()
  receiver?.stop()
  await cleanup()
})

const go = (hash: string) => page.evaluate(`location.hash = ${JSON.stringify(hash)}`)
const cells = (rows: string, label: string) => page.texts(`${rows} td[data-label="${label}"]`)
const rowOf = (id: string) => `table.webhooks tr[data-id="${id}"]`
let hook: { id: string; secret: string; job_id: string }
let runId = ''

describe('the webhooks page, driven in Chromium', () => {
  test('a webhook made through the form: the 422 at its URL first, then its secret shown once', async () => {
    const job = (await trawl.api.post('/v1/jobs', { name: 'fixture', config: { seeds: [`${site.origin}/`], limits: { max_depth: 1 } } }, T)).body
    await page.goto(`${trawl.managementUrl}/#/webhooks`)
    await page.waitFor('the job in the form', `!!document.querySelector('select[name=job] option[value="${job.id}"]')`)
    expect(await page.texts('select[name=job] option')).toEqual(['all jobs', 'fixture', 'gave up'])
    expect(await page.texts('header.top nav a.active')).toEqual(['Webhooks'])
    await page.fill('input[name=url]', 'ftp://x')
    await page.fill('select[name=job]', job.id)
    await page.click('input[name=events][value="run.started"]')
    await page.click('.webhook-form button[type=submit]')
    await page.waitFor('the 422 at the URL', `!!document.querySelector('[data-error-for=url]')`)
    const refused = await trawl.api.post('/v1/webhooks', { url: 'ftp://x', events: ['run.started', 'run.finished'], job_id: job.id }, T)
    expect(refused.status).toBe(422)
    expect(refused.body.fields).toEqual([{ field: 'url', errors: [expect.any(String)] }])
    expect(await page.text('[data-error-for=url]')).toBe(refused.body.fields[0].errors[0])
    expect((await trawl.api.get('/v1/webhooks', T)).body.data.map((w: { id: string }) => w.id)).toEqual([gaveUp.webhook])

    await page.fill('input[name=url]', receiver.url())
    await page.click('.webhook-form button[type=submit]')
    const shown = await page.waitFor<string>('the secret', `document.querySelector('.new-secret input[name=secret-created]')?.value`)
    const listed = (await trawl.api.get('/v1/webhooks', T)).body.data
    expect(listed).toHaveLength(2)
    hook = listed[0]
    expect(hook).toMatchObject({ url: receiver.url(), job_id: job.id, events: ['run.started', 'run.finished'], enabled: true })
    expect(shown).toBe(hook.secret)
    expect(shown).toMatch(/^whsec_[A-Za-z0-9+/]+=*$/)
    expect(await page.text('.new-secret')).toContain(receiver.url())
    receiver.trust(shown)

    await page.waitFor('the new row', `!!document.querySelector('${rowOf(hook.id)}')`)
    expect(await cells(rowOf(hook.id), 'URL')).toEqual([receiver.url()])
    expect(await cells(rowOf(hook.id), 'Job')).toEqual(['fixture'])
    expect(await cells(rowOf(hook.id), 'Events')).toEqual(['run.started run.finished'])
    expect(await cells(rowOf(hook.id), 'Enabled')).toEqual(['yes'])
    expect(await cells(rowOf(gaveUp.webhook), 'Job')).toEqual(['gave up'])
    // Copy selects the whole secret, and copies it where the browser lets a page write the clipboard.
    await page.click('.new-secret button[name=copy]')
    const said = await page.waitFor<string>('the copy hint', `document.querySelector('.new-secret .copied')?.textContent`)
    expect(['copied', 'selected: press Ctrl+C']).toContain(said)
    expect(await page.evaluate(`(() => { const i = document.querySelector('.new-secret input'); return i.value.slice(i.selectionStart, i.selectionEnd) })()`)).toBe(shown)
    // The form is empty again, and the secret goes when the user says it is copied.
    expect(await page.evaluate(`document.querySelector('input[name=url]').value`)).toBe('')
    await page.click('.new-secret button.link')
    await page.waitFor('the secret gone', `!document.querySelector('.new-secret')`)
  })

  test("a crawl's deliveries appear, delivered, newest first, as the API and the receiver have them", async () => {
    runId = (await trawl.api.post(`/v1/jobs/${hook.job_id}/runs`, {}, T)).body.id
    await go(`#/webhooks/${hook.id}`)
    await page.waitFor('two deliveries delivered', `[...document.querySelectorAll('table.deliveries tbody tr')].filter((r) => r.dataset.status === 'delivered').length === 2`, 15_000)
    const api = (await trawl.api.get(`/v1/webhooks/${hook.id}/deliveries`, T)).body.data
    expect(api.map((d: { event: string }) => d.event)).toEqual(['run.finished', 'run.started'])
    expect(await page.evaluate(`[...document.querySelectorAll('table.deliveries tbody tr')].map((r) => r.dataset.id)`)).toEqual(api.map((d: { id: string }) => d.id))
    expect(await cells('table.deliveries tbody tr', 'Event')).toEqual(['run.finished', 'run.started'])
    expect(await page.texts('table.deliveries tbody tr td[data-label=Status] .pill')).toEqual(['delivered', 'delivered'])
    expect(await cells('table.deliveries tbody tr', 'Next attempt')).toEqual(['—', '—'])
    for (const d of api) {
      expect(d.attempts).toHaveLength(1)
      const row = `table.deliveries tr[data-id="${d.id}"]`
      expect(await page.texts(`${row} ol.attempts .outcome`)).toEqual(['HTTP 204'])
      expect(await page.texts(`${row} ol.attempts .duration`)).toEqual([`${d.attempts[0].duration_ms} ms`])
      expect(await page.texts(`${row} ol.attempts .at`)).toEqual([d.attempts[0].at.replace('T', ' ').slice(0, 19) + 'Z'])
      // The payload, collapsed until opened, is the body the receiver verified.
      expect(await page.evaluate(`document.querySelector('${row} details').open`)).toBe(false)
      await page.click(`${row} details summary`)
      const payload = JSON.parse((await page.text(`${row} details pre`))!)
      expect(payload).toEqual(d.payload)
      expect(JSON.parse(receiver.received.find((r) => r.id === d.id)!.body)).toEqual(payload)
    }
    expect(
      receiver
        .ofRun(runId)
        .map((r) => r.type)
        .sort(),
    ).toEqual(['run.finished', 'run.started'])
    expect(receiver.rejected).toEqual([])
    // The next poll's answer leaves an opened payload open.
    await page.evaluate(`(() => {
      const fetch = window.fetch
      window.polled = 0
      window.fetch = (...a) => fetch(...a).then((r) => (String(a[0]).includes('/deliveries') && setTimeout(() => window.polled++, 50), r))
    })()`)
    await page.waitFor('a poll', 'window.polled > 0', 3000)
    expect(await page.evaluate(`[...document.querySelectorAll('table.deliveries details')].map((d) => d.open)`)).toEqual([true, true])
  })

  test('a failed delivery, filtered by status, retried with its button: delivered on its second attempt', async () => {
    await go(`#/webhooks/${gaveUp.webhook}`)
    await page.waitFor('the failed delivery', `document.querySelector('table.deliveries tr[data-id="${gaveUp.delivery}"]')?.dataset.status === 'failed'`)
    await page.fill('select[name=status]', 'delivered')
    await page.waitFor('none delivered', `!document.querySelector('table.deliveries tbody tr') && !!document.querySelector('p.empty')`)
    expect(await page.text('p.empty')).toBe('No deliveries delivered.')
    await page.fill('select[name=status]', 'failed')
    const row = `table.deliveries tr[data-id="${gaveUp.delivery}"]`
    await page.waitFor('the failed one', `!!document.querySelector('${row}')`)
    const failed = (await trawl.api.get(`/v1/webhooks/${gaveUp.webhook}/deliveries?statuses=failed`, T)).body.data
    expect(failed.map((d: { id: string }) => d.id)).toEqual([gaveUp.delivery])
    expect(await page.texts(`${row} ol.attempts .outcome`)).toEqual([failed[0].attempts[0].error])
    expect(await page.texts(`${row} ol.attempts li.failed`)).toHaveLength(1)

    await page.click(`${row} button[name=retry]`)
    await page.fill('select[name=status]', '')
    await page.waitFor('delivered after the retry', `document.querySelector('${row}')?.dataset.status === 'delivered'`, 10_000)
    expect(await page.texts(`${row} ol.attempts .outcome`)).toEqual([failed[0].attempts[0].error, 'HTTP 204'])
    expect(await page.evaluate(`!!document.querySelector('${row} button[name=retry]')`)).toBe(false)
    const delivered = (await trawl.api.get(`/v1/webhooks/${gaveUp.webhook}/deliveries/${gaveUp.delivery}`, T)).body
    expect(delivered.status).toBe('delivered')
    expect(delivered.attempts.map((a: { status_code: number | null }) => a.status_code)).toEqual([null, 204])
    expect(receiver.received.filter((r) => r.id === gaveUp.delivery).map((r) => r.data.run_id)).toEqual([gaveUp.run])
  })

  test('disable, enable and delete from the list; at 390 px the pages fit; the page logged no error', async () => {
    await go('#/webhooks')
    await page.click(`${rowOf(hook.id)} button[name=toggle]`, 'Disable')
    await page.waitFor('disabled', `document.querySelector('${rowOf(hook.id)} td[data-label=Enabled]')?.textContent === 'no'`)
    expect((await trawl.api.get(`/v1/webhooks/${hook.id}`, T)).body.enabled).toBe(false)
    await page.click(`${rowOf(hook.id)} button[name=toggle]`, 'Enable')
    await page.waitFor('enabled', `document.querySelector('${rowOf(hook.id)} td[data-label=Enabled]')?.textContent === 'yes'`)
    expect((await trawl.api.get(`/v1/webhooks/${hook.id}`, T)).body.enabled).toBe(true)

    await page.size(390, 844, true)
    expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(390)
    await go(`#/webhooks/${hook.id}`)
    await page.waitFor('the deliveries as cards', `document.querySelectorAll('table.deliveries tbody tr').length === 2`)
    await page.evaluate(`document.querySelectorAll('table.deliveries details').forEach((d) => (d.open = true))`)
    expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(390)
    // A card's overflow may be clipped rather than scroll the page: every box ends inside its card.
    const outside = `[...document.querySelectorAll('table.deliveries td *')].filter((e) => e.getBoundingClientRect().right > e.closest('tr').getBoundingClientRect().right).map((e) => e.tagName)`
    expect(await page.evaluate(outside)).toEqual([])
    await page.size(1280, 800)

    await go('#/webhooks')
    await page.evaluate('window.confirm = () => true')
    await page.click(`${rowOf(gaveUp.webhook)} button.danger`)
    await page.waitFor('one row left', `document.querySelectorAll('table.webhooks tbody tr').length === 1`)
    expect((await trawl.api.get(`/v1/webhooks/${gaveUp.webhook}`, T)).status).toBe(404)
    expect(page.errors).toEqual([])
  })
})
