// A method a path does not serve is a 405 with Allow and the JSON error body, on both ports; a
// path no route has stays a 404. Over real sockets, since HEAD is the server's business.
import { afterAll, describe, expect, test } from 'bun:test'
import { jsonClient } from '../helpers/client'
import { testApi } from '../helpers/api'
import { testScrape } from '../helpers/scrape'

const api = testApi({ TRAWL_LOG_LEVEL: 'debug' })
const scrape = testScrape()
const managementServer = api.app.listen({ hostname: '127.0.0.1', port: 0 }).server!
const scrapeServer = scrape.app.listen({ hostname: '127.0.0.1', port: 0 }).server!
const management = jsonClient(`http://127.0.0.1:${managementServer.port}`, (r) => fetch(r))
const scrapePort = jsonClient(`http://127.0.0.1:${scrapeServer.port}`, (r) => fetch(r))
afterAll(async () => {
  managementServer.stop(true)
  scrapeServer.stop(true)
  api.close()
  await scrape.close()
})

const JOB = '0190a0a0-0000-7000-8000-000000000000'
const HASH = 'a379a6f6eeafb9a55e378c118034e275'

describe('405 method_not_allowed', () => {
  test.each([
    ['PATCH', `/v1/jobs/${JOB}`, 'GET, HEAD, PUT, DELETE'],
    ['PATCH', '/v1/jobs/not-a-uuid/', 'GET, HEAD, PUT, DELETE'],
    ['DELETE', '/v1/jobs', 'GET, HEAD, POST'],
    ['POST', `/v1/runs/${JOB}/pause`, 'PUT'],
    ['GET', `/v1/data_maps/${JOB}/apply`, 'POST'],
    ['POST', `/v1/hosts/${HASH}/labels`, 'GET, HEAD, PUT, DELETE'],
    ['OPTIONS', `/v1/artifacts/${JOB}/blob`, 'GET, HEAD'],
    ['PUT', '/openapi.json', 'GET, HEAD'],
  ])('management: %s %s answers Allow: %s, with no tenant needed', async (method, path, allow) => {
    for (const tenant of [null, 'acme', 'not a tenant!']) {
      const r = await management.call(method, path, { tenant, body: method === 'GET' ? undefined : { name: 'x' } })
      expect(r.status).toBe(405)
      expect(r.headers.get('allow')).toBe(allow)
      expect(r.headers.get('content-type')).toBe('application/json')
      expect(r.body).toEqual({ error: 'method_not_allowed', message: `${method} is not allowed on ${path}; it answers ${allow}` })
    }
  })

  test.each([
    ['DELETE', '/v1/scrape', 'POST, OPTIONS'],
    ['GET', '/v1/scrape', 'POST, OPTIONS'],
    ['PUT', '/v1/scrape/https://example.com/a?b=1', 'GET, HEAD, OPTIONS'],
    ['POST', '/v1/scrape/https%3A%2F%2Fexample.com%2F', 'GET, HEAD, OPTIONS'],
  ])('scrape: %s %s answers Allow: %s, with the CORS headers', async (method, path, allow) => {
    const r = await scrapePort.call(method, path, { tenant: null, body: method === 'GET' ? undefined : { url: 'https://example.com/' } })
    expect(r.status).toBe(405)
    expect(r.headers.get('allow')).toBe(allow)
    expect(r.headers.get('access-control-allow-origin')).toBe('*')
    expect(r.body).toEqual({ error: 'method_not_allowed', message: `${method} is not allowed on ${path.replace(/\?.*/, '')}; it answers ${allow}` })
  })

  test('HEAD on a path that serves no GET: 405 with Allow and no body', async () => {
    const r = await management.call('HEAD', '/v1/parse')
    expect(r.status).toBe(405)
    expect(r.headers.get('allow')).toBe('POST')
    expect(r.text).toBe('')
  })

  test('every path of the OpenAPI document: Allow names exactly the methods of the routes it matches, plus HEAD with GET', async () => {
    for (const [client, options] of [
      [management, ''],
      [scrapePort, ', OPTIONS'],
    ] as const) {
      const doc = (await client.get('/openapi.json', { tenant: null })).body as { paths: Record<string, Record<string, unknown>> }
      expect(Object.keys(doc.paths).length).toBeGreaterThan(1)
      for (const template of Object.keys(doc.paths)) {
        const path = template.replace('{url}', 'https://example.com/').replace(/\{[^}]+\}/g, 'x')
        // A static path may also match a parameter's (`/v1/triggers/preview` and `/v1/triggers/{trigger_id}`): the router serves both.
        const matches = (t: string) => new RegExp(`^${t.replace('{url}', '.+').replace(/\{[^}]+\}/g, '[^/]+')}$`).test(path)
        const methods = [...new Set(Object.entries(doc.paths).flatMap(([t, o]) => (t === template || matches(t) ? Object.keys(o).map((m) => m.toUpperCase()) : [])))]
        if (methods.includes('GET')) methods.push('HEAD')
        const order = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE']
        // A method the path does not serve (PATCH, or PUT where PATCH is served).
        const r = await client.call(methods.includes('PATCH') ? 'PUT' : 'PATCH', path, { tenant: null })
        expect([template, r.status, r.headers.get('allow')]).toEqual([template, 405, methods.sort((a, b) => order.indexOf(a) - order.indexOf(b)).join(', ') + options])
      }
    }
  })

  test('nothing in the OpenAPI document changed: no 405 is documented', async () => {
    for (const client of [management, scrapePort]) {
      const text = (await client.get('/openapi.json', { tenant: null })).text
      expect(text).not.toContain('405')
      expect(text).not.toContain('method_not_allowed')
    }
  })

  test('the access line logs the 405', async () => {
    await management.call('PATCH', `/v1/jobs/${JOB}`)
    await Bun.sleep(20)
    expect(api.logs.filter((l) => l.includes(' debug request ') && l.includes('method="PATCH"')).at(-1)).toContain(`path="/v1/jobs/${JOB}" status=405`)
  })
})

describe('404 not_found stays for paths no route has', () => {
  test.each([
    ['management', 'PATCH', '/v1/nothing-here'],
    ['management', 'GET', '/v1/jobs//'],
    ['management', 'DELETE', `/v1/jobs/${JOB}/nothing`],
    ['scrape', 'DELETE', '/v1/jobs'],
    ['scrape', 'GET', '/nope'],
  ])('%s: %s %s', async (port, method, path) => {
    const r = await (port === 'scrape' ? scrapePort : management).call(method, path, { tenant: null })
    expect(r.status).toBe(404)
    expect(r.headers.get('allow')).toBeNull()
    expect(r.body).toEqual({ error: 'not_found', message: `no route for ${method} ${path}` })
  })
})
