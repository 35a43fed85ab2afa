import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { job, qs, testApi, type TestApi } from '../helpers/api'

let api: TestApi
beforeAll(async () => {
  api = testApi()
  // 250 of each, beside another tenant's rows interleaved in the same tables.
  for (let i = 0; i < 250; i++) {
    await api.post('/v1/jobs', job({ name: `job-${i}`, labels: i % 2 ? { parity: 'odd' } : { parity: 'even' } }))
    if (i % 10 === 0) await api.post('/v1/jobs', job({ name: `other-${i}` }), { tenant: 'other' })
  }
  const urls = Array.from({ length: 250 }, (_, i) => `https://p${i % 7}.example/page/${i}`)
  await api.put('/v1/links', { urls: urls.slice(0, 200) })
  await api.put('/v1/links', { urls: urls.slice(200) })
  await api.put('/v1/links', { urls: ['https://p0.example/other'] }, { tenant: 'other' })
})
afterAll(() => api.close())

/** Walks every page; `during` runs after each page (to insert rows mid-walk). */
async function walk(path: string, perPage: number, during?: (page: number) => Promise<void>) {
  const seen: string[] = []
  let cursor: string | null = null
  let pages = 0
  do {
    const sep = path.includes('?') ? '&' : '?'
    const r = await api.get(`${path}${sep}per_page=${perPage}${cursor ? `&page=${cursor}` : ''}`)
    expect(r.status).toBe(200)
    expect(r.body.data.length).toBeLessThanOrEqual(perPage)
    seen.push(...r.body.data.map((x: any) => x.id ?? x.hash))
    cursor = r.body.next_page
    pages++
    if (during) await during(pages)
  } while (cursor)
  return { seen, pages }
}

describe('keyset pagination', () => {
  test('walks 250 jobs, newest first, each exactly once', async () => {
    const { seen, pages } = await walk('/v1/jobs', 10)
    expect(seen).toHaveLength(250)
    expect(new Set(seen).size).toBe(250)
    expect(pages).toBe(25)
    const first = (await api.get('/v1/jobs?per_page=1')).body.data[0]
    expect(first.name).toBe('job-249')
  })

  test('sees each of the 250 exactly once while new jobs are inserted mid-walk', async () => {
    const before = (await walk('/v1/jobs', 100)).seen
    const inserted: string[] = []
    const { seen } = await walk('/v1/jobs', 7, async () => {
      inserted.push((await api.post('/v1/jobs', job({ name: 'late' }))).body.id)
    })
    // Everything that existed at the start is seen once; rows inserted after the walk began sort
    // ahead of the cursor and are not seen, so nothing is duplicated or skipped.
    expect(seen).toEqual(before)
    for (const id of inserted) expect(seen).not.toContain(id)
    const now = (await walk('/v1/jobs', 100)).seen
    expect(now).toHaveLength(before.length + inserted.length)
    expect(now.slice(0, inserted.length)).toEqual([...inserted].reverse())
  })

  test('a label-filtered walk pages through the label index', async () => {
    const { seen } = await walk(`/v1/jobs${qs([['labels[parity]', 'odd']])}`, 10)
    expect(seen).toHaveLength(125)
    expect(new Set(seen).size).toBe(125)
    const names = (
      await api.get(
        `/v1/jobs${qs([
          ['labels[parity]', 'odd'],
          ['per_page', 100],
        ])}`,
      )
    ).body.data.map((j: any) => j.name)
    expect(names.slice(0, 3)).toEqual(['job-249', 'job-247', 'job-245'])
  })

  test('walks 250 links, also per host and with per_page 100', async () => {
    const all = await walk('/v1/links', 100)
    expect(all.seen).toHaveLength(250)
    expect(new Set(all.seen).size).toBe(250)
    expect(all.pages).toBe(3)
    const p0 = (
      await api.get(
        `/v1/links${qs([
          ['hosts', 'p0.example'],
          ['per_page', 1],
        ])}`,
      )
    ).body.data[0]
    const ofHost = await walk(`/v1/hosts/${p0.host.hash}/links`, 4)
    expect(ofHost.seen).toHaveLength(36)
    expect(new Set(ofHost.seen).size).toBe(36)
  })

  test('the last page has next_page null; a page exactly full still ends', async () => {
    const r = await api.get('/v1/links?per_page=100')
    const second = await api.get(`/v1/links?per_page=100&page=${r.body.next_page}`)
    const third = await api.get(`/v1/links?per_page=100&page=${second.body.next_page}`)
    expect(third.body.data).toHaveLength(50)
    expect(third.body.next_page).toBeNull()
    const hosts = await api.get('/v1/hosts?per_page=7')
    expect(hosts.body.data).toHaveLength(7)
    expect(hosts.body.next_page).toBeNull()
  })

  test('default per_page is 10', async () => {
    expect((await api.get('/v1/jobs')).body.data).toHaveLength(10)
  })
})
