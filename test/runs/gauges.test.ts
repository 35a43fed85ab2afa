// The runs gauges of /metrics (src/runs/gauges.ts) over a real store: runs by status and the URLs
// queued in unfinished ones, every tenant's, with and without TRAWL_METRICS_TENANTS' label.
import { afterAll, expect, test } from 'bun:test'
import { labelTenants, metrics } from '../../src/metrics'
import { runGauges } from '../../src/runs/gauges'
import { job, testApi } from '../helpers/api'
import { valueOf } from '../helpers/promtool'

const api = testApi()
afterAll(() => api.close())

const newRun = async (tenant: string) => {
  const r = await api.post('/v1/jobs?create_run=true', job(), { tenant })
  expect(r.status).toBe(201)
  return r.body.run.id as string
}

test('runs by status over every tenant, each status shown; with tenant labels, per tenant', async () => {
  await newRun('t-one')
  const stopped = await newRun('t-one')
  expect((await api.put(`/v1/runs/${stopped}/stop`, undefined, { tenant: 't-one' })).status).toBe(200)
  await newRun('t-two')
  const collect = runGauges(api.store)
  const read = async () => {
    await collect()
    return metrics.text()
  }
  try {
    labelTenants(false)
    const plain = await read()
    expect(['pending', 'running', 'paused', 'finished'].map((status) => valueOf(plain, 'trawl_runs', { status }))).toEqual([2, 0, 0, 1])
    expect(valueOf(plain, 'trawl_frontier_urls')).toBe(0)
    expect(plain).not.toContain('t-one')

    labelTenants(true)
    const labelled = await read()
    expect(['pending', 'finished', 'running'].map((status) => valueOf(labelled, 'trawl_runs', { tenant: 't-one', status }))).toEqual([1, 1, 0])
    expect(['pending', 'finished'].map((status) => valueOf(labelled, 'trawl_runs', { tenant: 't-two', status }))).toEqual([1, 0])
    expect(labelled).toContain('trawl_frontier_urls{tenant="t-two"} 0')
    // The unlabelled series of the earlier scrape are gone, not left beside the tenants' own.
    expect(labelled).not.toContain('trawl_runs{status=')
  } finally {
    labelTenants(false)
  }
})
