// How much of a run's visits a page of its crawl log reads on the SQLite engine: the statement
// is watched through the engine's own database handle, so this stays a test of that engine.
import { afterAll, beforeAll, expect, spyOn, test } from 'bun:test'
import { job, sqliteTestApi, type TestApi } from '../helpers/api'
import { logPageRecords, type LoggedLink } from '../helpers/log-pages'

let api: TestApi
beforeAll(() => {
  api = sqliteTestApi()
})
afterAll(() => api.close())

const BASE = Date.UTC(2026, 0, 4, 23, 40, 0)
const HOSTS = ['a.example', 'b.example', 'c.example']

test('a deep page reads the visits about its own time, not the run’s newer ones', async () => {
  const run = (await api.post('/v1/jobs?create_run=true', job())).body.run.id as string
  const ids = Array.from({ length: 3000 }, (_, i) => 10_000 + i)
  const urls = ids.map((i) => `https://${HOSTS[i % 3]}/page/${i}`)
  const ls: LoggedLink[] = []
  for (let k = 0; k < urls.length; k += 255) ls.push(...(await api.put('/v1/links', { urls: urls.slice(k, k + 255) })).body.data)
  await api.recordPages(await api.runSeq('acme', run), logPageRecords(ls, ids, BASE))
  let read = 0
  const query = api.db.query.bind(api.db)
  const spy = spyOn(api.db, 'query').mockImplementation(((sql: string) => {
    const st = query(sql)
    if (!sql.includes('FROM visits v WHERE v.run_seq') || !sql.includes('ORDER BY v.seq DESC')) return st
    return new Proxy(st, {
      get: (t, k) => (k === 'all' ? (...a: any[]) => ((rows) => ((read += rows.length), rows))((t as any).all(...a)) : typeof (t as any)[k] === 'function' ? (t as any)[k].bind(t) : (t as any)[k]),
    })
  }) as any)
  try {
    let cursor: string | null = null
    const pages: number[] = []
    for (let p = 0; p < 300; p++) {
      read = 0
      const r: any = await api.get(`/v1/runs/${run}/logs?per_page=20${cursor ? `&page=${cursor}` : ''}`)
      cursor = r.body.next_page
      pages.push(read)
    }
    // About 20 entries of pages that each stand for up to four: a few dozen visits a page,
    // never the thousands recorded after it.
    expect(Math.max(...pages)).toBeLessThan(400)
  } finally {
    spy.mockRestore()
  }
}, 30_000)
