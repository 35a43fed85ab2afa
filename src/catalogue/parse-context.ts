import { hostHash, normalizeHost } from '../core/url'
import type { DataMapDef } from '../extract/data-map'
import type { PatternSetDef } from '../extract/patterns'
import { baseUrlOf, dataMapIds, type ParseContext, type ParseInput } from '../parse/pipeline'
import type { Store } from '../store'

/** The parts of a parse input that say what its pipelines will look up. */
export type ContextNeeds = Pick<ParseInput, 'url' | 'redirects' | 'pipelines'>

/**
 * A tenant's pattern sets and data maps as the pipelines of these inputs will ask for them. The
 * parsers ask synchronously and the store answers asynchronously, so everything is read first:
 * the data maps the pipelines name, and, where a pipeline has a category guard, the pattern sets
 * of the host its input is at. Each is read once for the whole request (decision 63).
 */
export async function storeParseContext(store: Store, tenant: string, inputs: readonly ContextNeeds[]): Promise<ParseContext> {
  const maps = new Map<string, DataMapDef | null>()
  const setsByHost = new Map<string, readonly PatternSetDef[]>()
  for (const input of inputs) {
    for (const id of dataMapIds(input.pipelines)) {
      if (!maps.has(id)) maps.set(id, (await store.dataMaps.get(tenant, id))?.map ?? null)
    }
    if (!input.pipelines.some((p) => p.guards?.some((g) => g.kind === 'category'))) continue
    const host = hostKey(baseUrlOf(input.url, input.redirects))
    if (host !== null && !setsByHost.has(host)) setsByHost.set(host, await store.patterns.forHost(tenant, hostHash(host)))
  }
  return {
    patternSets: (url) => {
      const host = hostKey(url)
      return (host !== null && setsByHost.get(host)) || []
    },
    dataMap: (id) => maps.get(id) ?? null,
  }
}

function hostKey(url: string): string | null {
  const parsed = URL.parse(url)
  return parsed ? normalizeHost(parsed.hostname) : null
}
