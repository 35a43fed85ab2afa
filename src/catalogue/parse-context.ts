import { hostHash, normalizeHost } from '../core/url'
import type { ParseContext } from '../parse/pipeline'
import type { Store } from '../store'

/**
 * A tenant's pattern sets and data maps as the pipelines see them. Lookups are memoized for
 * the life of the context (one request, or one execution of a crawl: decision 63), so a batch
 * of pages of one host reads its pattern sets once.
 */
export function storeParseContext(store: Store, tenant: string): ParseContext {
  const setsByHost = new Map<string, ReturnType<Store['patterns']['forHost']>>()
  const maps = new Map<string, ReturnType<ParseContext['dataMap']>>()
  return {
    patternSets(url) {
      const host = normalizeHost(new URL(url).hostname)
      if (!host) return []
      let sets = setsByHost.get(host)
      if (!sets) setsByHost.set(host, (sets = store.patterns.forHost(tenant, hostHash(host))))
      return sets
    },
    dataMap(id) {
      if (!maps.has(id)) maps.set(id, store.dataMaps.get(tenant, id)?.map ?? null)
      return maps.get(id)!
    },
  }
}
