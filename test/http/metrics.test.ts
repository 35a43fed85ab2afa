// The HTTP metrics of createApp (docs/metrics.md): every answer counted by surface, method, route
// template and status, those onRequest gives itself (a preflight, a 413) as `unmatched`, and the
// /metrics route an app is given.
import { expect, test } from 'bun:test'
import { Type } from '@sinclair/typebox'
import { createApp } from '../../src/http/app'
import { route } from '../../src/http/route'
import { createLogger } from '../../src/log'
import { httpRequests, httpSeconds } from '../../src/metrics'
import { waitFor } from '../helpers/wait'

const app = createApp({
  title: 't',
  description: 'd',
  routes: [
    route({
      method: 'GET',
      path: '/v1/things/:id',
      summary: 'a thing',
      tag: 'things',
      tenant: false,
      params: Type.Object({ id: Type.String({ pattern: '^[a-z0-9]+$' }) }),
      handle: ({ params }) => ({ status: 200, body: { id: params.id } }),
    }),
  ],
  log: createLogger('error'),
  maxRequestBytes: 10,
  tenant: false,
  // A surface label no other test's app uses, so the counts here are this file's alone.
  surface: 'scrape',
  cors: { allowHeaders: [], exposeHeaders: [] },
  metrics: async () => new Response('# metrics\n'),
})
const call = (method: string, path: string, body?: string) =>
  app.handle(new Request(`http://localhost${path}`, { method, body, headers: body === undefined ? {} : { 'content-length': String(body.length) } }))
const count = (method: string, route: string, status: number) => httpRequests.labels('scrape', method, route, String(status)).value

test('answers are counted under their route template, never their path; what no route took, as unmatched', async () => {
  const before = {
    ok: count('GET', '/v1/things/:id', 200),
    invalid: count('GET', '/v1/things/:id', 422),
    preflight: count('OPTIONS', 'unmatched', 204),
    tooLarge: count('POST', 'unmatched', 413),
    notAllowed: count('DELETE', 'unmatched', 405),
    unknown: count('GET', 'unmatched', 404),
    metrics: count('GET', '/metrics', 200),
    timed: httpSeconds.labels('scrape', 'GET', '/v1/things/:id').count,
  }
  expect((await call('GET', '/v1/things/a1')).status).toBe(200)
  expect((await call('GET', '/v1/things/b2')).status).toBe(200)
  expect((await call('GET', '/v1/things/NOT-OK')).status).toBe(422)
  expect((await call('OPTIONS', '/v1/things/a1')).status).toBe(204)
  expect((await call('POST', '/v1/things/a1', 'x'.repeat(100))).status).toBe(413)
  expect((await call('DELETE', '/v1/things/a1')).status).toBe(405)
  expect((await call('GET', '/v1/nothing/here')).status).toBe(404)
  const m = await call('GET', '/metrics')
  expect(await m.text()).toBe('# metrics\n')
  // onAfterResponse runs once the answer is out, after app.handle resolved; in order, so the last one counted means all are.
  await waitFor('the last answer counted', () => count('GET', '/metrics', 200) > before.metrics, 1000, 1)
  expect({
    ok: count('GET', '/v1/things/:id', 200) - before.ok,
    invalid: count('GET', '/v1/things/:id', 422) - before.invalid,
    preflight: count('OPTIONS', 'unmatched', 204) - before.preflight,
    tooLarge: count('POST', 'unmatched', 413) - before.tooLarge,
    notAllowed: count('DELETE', 'unmatched', 405) - before.notAllowed,
    unknown: count('GET', 'unmatched', 404) - before.unknown,
    metrics: count('GET', '/metrics', 200) - before.metrics,
    timed: httpSeconds.labels('scrape', 'GET', '/v1/things/:id').count - before.timed,
  }).toEqual({ ok: 2, invalid: 1, preflight: 1, tooLarge: 1, notAllowed: 1, unknown: 1, metrics: 1, timed: 3 })
  expect(httpRequests.entries().some((e) => e.values.some((v) => v.includes('a1') || v.includes('nothing')))).toBe(false)
})
