import { expect, test } from 'bun:test'
import { testApi } from '../helpers/api'

const requestLines = (logs: string[]) => logs.filter((l) => l.includes(' debug request '))

test('at debug level every request is logged with its status and time', async () => {
  const api = testApi({ TRAWL_LOG_LEVEL: 'debug' })
  try {
    await api.get('/v1/jobs?per_page=2')
    await api.get('/v1/jobs/not-a-uuid')
    await api.get('/v1/missing')
    await api.get('/v1/runs', { tenant: null })
    await Bun.sleep(20) // after-response hooks run once the response is handed back
    const lines = requestLines(api.logs)
    expect(lines).toHaveLength(4)
    expect(lines[0]).toMatch(/method="GET" path="\/v1\/jobs\?per_page=2" status=200 ms=[\d.]+$/)
    expect(lines[1]).toContain('status=422')
    expect(lines[2]).toContain('path="/v1/missing" status=404')
    expect(lines[3]).toContain('status=400')
  } finally {
    api.close()
  }
})

test('at info level requests are not logged', async () => {
  const api = testApi({ TRAWL_LOG_LEVEL: 'info' })
  try {
    await api.get('/v1/jobs')
    await Bun.sleep(20)
    expect(requestLines(api.logs)).toEqual([])
  } finally {
    api.close()
  }
})
