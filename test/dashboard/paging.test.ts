// The dashboard's paged lists in headless Chromium, on the compiled binary: rows read with "More"
// are polled like the first page's, so a run deleted from a later page leaves the list. 52
// finished runs, written to the store before the binary starts: past the runs page's 50.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { cleanup, ensureBinary, startTrawl, tempDir, type Trawl } from '../helpers/binary'
import { writeStore } from '../helpers/binary-engine'
import { openBrowser, type BrowserPage } from '../helpers/chromium'
import { presetTenant } from './tenant'

const TENANT = 'paged'
const T = { tenant: TENANT }
const RUNS = 52
let trawl: Trawl
let page: BrowserPage

beforeAll(async () => {
  const dataDir = tempDir()
  ;[page] = await Promise.all([
    openBrowser(),
    ensureBinary(),
    writeStore(dataDir, async (store) => {
      for (let i = 0; i < RUNS; i++) {
        const [job, run] = [crypto.randomUUID(), crypto.randomUUID()]
        await store.jobs.create(TENANT, { id: job, name: `job ${i}`, config: { seeds: ['https://example.com/'] }, labels: {} }, { id: run, config: {} })
        await store.runs.move(TENANT, run, 'stop')
      }
    }),
  ])
  trawl = await startTrawl({ dataDir })
  await page.size(1280, 800)
  await presetTenant(page, trawl.managementUrl, TENANT)
}, 120_000)
afterAll(async () => {
  await page?.close()
  await cleanup()
})

const shownIds = () => page.evaluate<string[]>(`[...document.querySelectorAll('table.runs tbody tr')].map((tr) => tr.dataset.id)`)

test('runs read with "More" are polled with the first page: one deleted from the second page leaves the list', async () => {
  await page.goto(`${trawl.managementUrl}/#/runs`)
  await page.waitFor('the first page', `document.querySelectorAll('table.runs tbody tr').length === 50`)
  await page.click('button', 'More')
  await page.waitFor('both pages', `document.querySelectorAll('table.runs tbody tr').length === ${RUNS}`)
  const first = await trawl.api.get('/v1/runs?per_page=50', T)
  const second = await trawl.api.get(`/v1/runs?per_page=50&page=${encodeURIComponent(first.body.next_page)}`, T)
  const all = [...first.body.data, ...second.body.data] as { id: string; job_id: string }[]
  expect(second.body.next_page).toBeNull()
  expect(await shownIds()).toEqual(all.map((r) => r.id))
  expect(await page.evaluate(`[...document.querySelectorAll('button')].some((b) => b.textContent === 'More')`)).toBe(false)

  // The oldest run, on the second page: its job deleted through the API, not the page.
  const oldest = all.at(-1)!
  expect((await trawl.api.del(`/v1/jobs/${oldest.job_id}`, T)).status).toBe(204)
  await page.waitFor('the deleted run gone', `!document.querySelector('table.runs tbody tr[data-id="${oldest.id}"]')`)
  expect(await shownIds()).toEqual(all.slice(0, -1).map((r) => r.id))
  expect(page.errors).toEqual([])
})
