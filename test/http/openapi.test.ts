import { afterAll, describe, expect, test } from 'bun:test'
import { testApi } from '../helpers/api'

const api = testApi()
afterAll(() => api.close())

describe('OpenAPI document', () => {
  test('is 3.1, lists every route, and documents every hand-parsed query parameter', async () => {
    const r = await api.get('/openapi.json', { tenant: null })
    expect(r.status).toBe(200)
    const doc = r.body
    expect(doc.openapi).toStartWith('3.1')
    expect(Object.keys(doc.paths).sort()).toEqual(
      [
        '/mcp',
        '/v1/artifacts',
        '/v1/artifacts/{artifact_id}',
        '/v1/artifacts/{artifact_id}/blob',
        '/v1/data_maps',
        '/v1/data_maps/{map_id}',
        '/v1/data_maps/{map_id}/apply',
        '/v1/fetch',
        '/v1/fetch/batch',
        '/v1/hosts',
        '/v1/hosts/{host_hash}',
        '/v1/hosts/{host_hash}/data_maps',
        '/v1/hosts/{host_hash}/labels',
        '/v1/hosts/{host_hash}/links',
        '/v1/hosts/{host_hash}/patterns',
        '/v1/jobs',
        '/v1/jobs/{job_id}',
        '/v1/jobs/{job_id}/runs',
        '/v1/jobs/{job_id}/triggers',
        '/v1/links',
        '/v1/links/{link_hash}',
        '/v1/links/{link_hash}/labels',
        '/v1/parse',
        '/v1/parse/batch',
        '/v1/patterns',
        '/v1/patterns/{patterns_id}',
        '/v1/patterns/{patterns_id}/match',
        '/v1/payments',
        '/v1/runs',
        '/v1/runs/{run_id}',
        '/v1/runs/{run_id}/edges',
        '/v1/runs/{run_id}/export',
        '/v1/runs/{run_id}/links',
        '/v1/runs/{run_id}/latency',
        '/v1/runs/{run_id}/logs',
        '/v1/runs/{run_id}/metrics',
        '/v1/runs/{run_id}/pause',
        '/v1/runs/{run_id}/resume',
        '/v1/runs/{run_id}/stop',
        '/v1/triggers',
        '/v1/triggers/preview',
        '/v1/triggers/{trigger_id}',
        '/v1/triggers/{trigger_id}/disable',
        '/v1/triggers/{trigger_id}/enable',
        '/v1/triggers/{trigger_id}/executions',
        '/v1/webhooks',
        '/v1/webhooks/{webhook_id}',
        '/v1/webhooks/{webhook_id}/deliveries',
        '/v1/webhooks/{webhook_id}/deliveries/{delivery_id}',
        '/v1/webhooks/{webhook_id}/deliveries/{delivery_id}/retry',
      ].sort(),
    )
    const params = (path: string, method: string) => Object.fromEntries(doc.paths[path][method].parameters.map((p: any) => [`${p.in}:${p.name}`, p]))
    const runs = params('/v1/runs', 'get')
    for (const name of ['page', 'per_page', 'include_ids', 'exclude_ids', 'statuses', 'stop_reasons', 'created_before', 'created_after', 'finished_before', 'finished_after', 'labels', 'job_ids']) {
      expect(runs[`query:${name}`]).toBeDefined()
    }
    expect(runs['query:labels']).toMatchObject({ style: 'deepObject', explode: true, schema: { type: 'object' } })
    expect(runs['query:statuses']).toMatchObject({ style: 'form', explode: true, schema: { type: 'array' } })
    expect(runs['query:per_page'].schema).toMatchObject({ minimum: 1, maximum: 100, default: 10 })
    const triggers = params('/v1/triggers', 'get')
    for (const name of ['page', 'per_page', 'job_ids', 'include_ids', 'exclude_ids', 'names', 'enabled', 'created_before', 'created_after', 'executed_before', 'executed_after']) {
      expect(triggers[`query:${name}`]).toBeDefined()
    }
    const executions = params('/v1/triggers/{trigger_id}/executions', 'get')
    for (const name of ['page', 'per_page', 'include_ids', 'exclude_ids', 'scheduled_before', 'scheduled_after', 'executed_before', 'executed_after', 'created_before', 'created_after']) {
      expect(executions[`query:${name}`]).toBeDefined()
    }
    expect(Object.keys(doc.paths['/v1/webhooks/{webhook_id}']).sort()).toEqual(['delete', 'get', 'patch'])
    const webhooks = params('/v1/webhooks', 'get')
    for (const name of ['page', 'per_page', 'job_ids', 'enabled']) expect(webhooks[`query:${name}`]).toBeDefined()
    expect(params('/v1/webhooks/{webhook_id}/deliveries', 'get')['query:statuses']).toMatchObject({ style: 'form', explode: true, schema: { type: 'array' } })
    const create = doc.paths['/v1/jobs/{job_id}/triggers'].post
    expect(JSON.stringify(create.requestBody)).toContain('on_finish')
    expect(JSON.stringify(create.requestBody)).toContain('timezone')
    expect(runs['header:x-tenant-id'].required).toBe(true)
    expect(params('/v1/hosts/{host_hash}/labels', 'delete')['query:keys'].required).toBe(true)
    expect(params('/v1/jobs', 'post')['query:create_run']).toBeDefined()
    const body = doc.paths['/v1/jobs'].post.requestBody.content['application/json'].schema
    expect(body.properties.config.properties.limits.properties.max_depth).toMatchObject({ default: 3, minimum: 0 })
    // the recursive Field schema lives in components and is referenced there
    const field = doc.components.schemas.Field
    expect(field.properties.fields.items).toEqual({ $ref: '#/components/schemas/Field' })
    expect(JSON.stringify(doc)).not.toMatch(/"\$ref":"(?!#)/)
    expect(JSON.stringify(doc)).not.toContain('"$id"')
    expect(doc.paths['/v1/jobs/{job_id}'].get.parameters.find((p: any) => p.in === 'path').schema.format).toBe('uuid')
  })

  test('the docs page loads its UI from this server, not a CDN', async () => {
    const page = await api.get('/docs', { tenant: null })
    expect(page.status).toBe(200)
    expect(page.body).toContain('/docs/assets/swagger-ui-bundle.js')
    expect(page.body).not.toMatch(/unpkg|jsdelivr|cdn\./)
    // the spec URL is absolute, so the page also works as /docs/
    const slash = await api.get('/docs/', { tenant: null })
    expect(slash.status).toBe(200)
    expect(slash.body).toContain('"url":"/openapi.json"')
    const js = await api.get('/docs/assets/swagger-ui-bundle.js', { tenant: null })
    expect(js.status).toBe(200)
    expect(js.headers.get('content-type')).toContain('javascript')
    expect(js.body.length).toBeGreaterThan(100_000)
    expect((await api.get('/docs/assets/nope.js', { tenant: null })).status).toBe(404)
  })
})
