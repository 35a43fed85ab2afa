/**
 * A data_map step inside a crawl: the page's URL is known there, so `url` values resolve against
 * it (or its <base href>) with the scheme and port the page was fetched from, unlike
 * POST /v1/data_maps/{id}/apply, which has no page URL.
 */
import { describe, expect, test } from 'bun:test'
import { linkHash } from '../../src/core/url'
import { useCrawlEnv } from '../helpers/crawl-run'
import { crawlSite } from '../helpers/crawl-site'

const env = useCrawlEnv()
const SCHEMA = '8a1f7c2e-4b3d-4e5f-9a6b-7c8d9e0f1a2b'

describe('a data_map step in a crawl', () => {
  test('url values resolve against the fetched page URL, its scheme and port kept', async () => {
    const links = '<a class="rel" href="sql-createlanguage.html">r</a><a class="root" href="/sql-createlanguage.html">o</a><a class="proto" href="//cdn.example/x.js">p</a>'
    const site = crawlSite({ pages: { '/docs/': { html: links }, '/based': { html: `<base href="/docs/">${links}` } } })
    try {
      const host = (await env.api.put('/v1/hosts', { hosts: ['127.0.0.1'] })).body.data[0].hash
      const fields = ['rel', 'root', 'proto'].map((name) => ({ name, selector: `a.${name}`, attr: 'href', type: 'url' }))
      const map = await env.api.post(`/v1/hosts/${host}/data_maps`, { schema_id: SCHEMA, map: { fields } })
      expect(map.status).toBe(201)
      const pipelines = [{ identifier: 'map', navigator: { kind: 'links', selector: 'a.none' }, steps: [{ kind: 'data_map', id: map.body.id }] }]
      const run = await env.crawl({ seeds: [site.url('/docs/'), site.url('/based')], pipelines })
      expect(run.stats.visited).toBe(2)

      const extracted = async (path: string) => {
        const parsed = (await env.artifacts(run.id, 'kinds=parsed')).filter((a) => a.url_hash === linkHash(site.url(path)))
        expect(parsed.map((a) => a.pipeline_id)).toEqual(['map'])
        const body = JSON.parse((await env.api.call('GET', `/v1/artifacts/${parsed[0].id}/blob`)).text)
        return body.pipeline.steps
      }
      const origin = `http://127.0.0.1:${site.port}`
      const expected = {
        kind: 'data_map',
        id: map.body.id,
        data: { rel: `${origin}/docs/sql-createlanguage.html`, root: `${origin}/sql-createlanguage.html`, proto: 'http://cdn.example/x.js' },
        errors: [],
      }
      expect(await extracted('/docs/')).toEqual([expected])
      // A relative <base href> resolves against the page URL too.
      expect(await extracted('/based')).toEqual([expected])
    } finally {
      await site.close()
    }
  })
})
