import { Type } from '@sinclair/typebox'
import { FetchError } from '../fetch/errors'
import { checkFetchBody, FetchBody, fetchRequestOf } from '../fetch/request-schema'
import { FetchBatchItem, FetchResultSchema, resultJson } from '../fetch/result-schema'
import { ApiError } from '../http/errors'
import { jsonText, route, type Route } from '../http/route'
import { looseArray, looseObject } from '../util/loose'
import type { Deps } from './deps'
import { failed } from './shapes'
import { MAX_BATCH_ITEMS } from './parse'

const closed = { additionalProperties: false } as const
/** Items of one batch fetched at once: enough to keep a batch fast, few enough that one batch cannot take every socket. */
const BATCH_CONCURRENCY = 32
/**
 * Bodies one batch may hold in all: 64 items of 10 MiB would be a gigabyte of JSON. Items that
 * finish after the budget is spent become `too_large` error items.
 */
export const BATCH_BODY_BUDGET = 64 * 1024 * 1024

/** Fetch: one URL (or up to 64) through trawl's fetcher, with everything it records. */
export const fetchRoutes = ({ config, log, fetcher }: Deps): Route[] => {
  const proxyNames = Object.keys(config.proxies)
  return [
    route({
      method: 'POST',
      path: '/v1/fetch',
      summary: 'Fetch one URL',
      description:
        'Answers 200 whenever the target answered, whatever its status. No answer: 504 timeout; 502 dns, connect, tls, too_large, redirect_limit, proxy, rejected, bad_response; 403 blocked_address; 503 browser_unavailable.',
      tag: 'fetch',
      body: FetchBody,
      refine: (body, errors) => checkFetchBody(body, '', proxyNames, errors),
      response: { status: 200, schema: FetchResultSchema },
      handle: async ({ tenant, body }) => {
        try {
          return jsonText(200, resultJson(await fetcher.fetch(fetchRequestOf(body), tenant)))
        } catch (err) {
          if (err instanceof FetchError) throw new ApiError(err.status, err.code, err.message)
          throw err
        }
      },
    }),
    route({
      method: 'POST',
      path: '/v1/fetch/batch',
      summary: 'Fetch 1 to 64 URLs at once; a failing item is an error item',
      tag: 'fetch',
      body: Type.Object({ items: Type.Array(FetchBody, { minItems: 1, maxItems: MAX_BATCH_ITEMS }) }, closed),
      refine: (body, errors) => looseArray(looseObject(body).items).forEach((item, i) => checkFetchBody(item, `items[${i}]`, proxyNames, errors)),
      response: { status: 200, schema: Type.Object({ results: Type.Array(FetchBatchItem, { description: 'in item order' }) }) },
      handle: async ({ tenant, body }) => {
        let budget = BATCH_BODY_BUDGET
        const results = await mapBounded(body.items, BATCH_CONCURRENCY, async (item) => {
          try {
            const result = await fetcher.fetch(fetchRequestOf(item), tenant)
            budget -= result.body.byteLength
            if (budget < 0) {
              return JSON.stringify(failed(item.url, 'too_large', `the batch's bodies together passed ${BATCH_BODY_BUDGET} bytes; fetch this item on its own`))
            }
            return resultJson(result, true)
          } catch (err) {
            if (err instanceof FetchError) return JSON.stringify(failed(item.url, err.code, err.message))
            log.error('fetch item failed', { url: item.url, error: String(err) })
            return JSON.stringify(failed(item.url, 'internal', 'the fetch failed unexpectedly'))
          }
        })
        return jsonText(200, `{"results":[${results.join(',')}]}`)
      },
    }),
  ]
}

/** `fn` over every item, at most `limit` at a time, answers in item order. */
async function mapBounded<T, R>(items: T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const out = new Array<R>(items.length)
  let next = 0
  const worker = async () => {
    while (next < items.length) {
      const i = next++
      out[i] = await fn(items[i]!)
    }
  }
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker))
  return out
}
