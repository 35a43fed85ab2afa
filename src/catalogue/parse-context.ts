import { hostHash, normalizeHost } from '../core/url'
import type { DataMapDef } from '../extract/data-map'
import type { PatternSetDef } from '../extract/patterns'
import { baseUrlOf, dataMapIds, type ParseContext, type ParseInput } from '../parse/pipeline'
import type { Pipeline } from '../parse/pipeline-schema'
import type { Store } from '../store'

/** The parts of a parse input that say what its pipelines will look up. */
export type ContextNeeds = Pick<ParseInput, 'url' | 'redirects' | 'pipelines'>

/**
 * A tenant's pattern sets and data maps as pipelines see them. The parsers ask synchronously and
 * the store answers asynchronously, so what a parse will ask is read first (`prepare…`): the data
 * maps its pipelines name, the pattern sets of the hosts at hand. Each is read once for the life
 * of the context: one request, or one execution of a crawl (decision 63).
 */
export class StoreParseContext implements ParseContext {
  private readonly maps = new Map<string, DataMapDef | null>()
  private readonly setsByHost = new Map<string, readonly PatternSetDef[]>()

  constructor(
    private readonly store: Store,
    private readonly tenant: string,
  ) {}

  /** Reads the data maps these pipelines name that are not read yet. */
  async preparePipelines(pipelines: readonly Pipeline[]) {
    for (const id of dataMapIds(pipelines)) {
      if (!this.maps.has(id)) this.maps.set(id, (await this.store.dataMaps.get(this.tenant, id))?.map ?? null)
    }
  }

  /** The origins (scheme and authority, as written) prepareHosts has met: a crawl asks for every link of every page. */
  private readonly askedOrigins = new Set<string>()

  /** Reads the pattern sets of these URLs' hosts that are not read yet. */
  async prepareHosts(urls: Iterable<string>) {
    for (const url of urls) {
      // Most links of a page share a few origins: their text is compared before any URL is parsed.
      const slash = url.indexOf('/', url.indexOf('//') + 2)
      const origin = slash < 0 ? url : url.slice(0, slash)
      if (this.askedOrigins.has(origin)) continue
      this.askedOrigins.add(origin)
      const host = hostKey(url)
      if (host !== null && !this.setsByHost.has(host)) this.setsByHost.set(host, await this.store.patterns.forHost(this.tenant, hostHash(host)))
    }
  }

  patternSets(url: string): readonly PatternSetDef[] {
    const host = hostKey(url)
    return (host !== null && this.setsByHost.get(host)) || []
  }

  dataMap(id: string): DataMapDef | null {
    return this.maps.get(id) ?? null
  }
}

/**
 * The context of one request's parses: the data maps their pipelines name, and, where a pipeline
 * has a category guard, the pattern sets of the host its input is at.
 */
export async function storeParseContext(store: Store, tenant: string, inputs: readonly ContextNeeds[]): Promise<ParseContext> {
  const ctx = new StoreParseContext(store, tenant)
  for (const input of inputs) {
    await ctx.preparePipelines(input.pipelines)
    if (input.pipelines.some((p) => p.guards?.some((g) => g.kind === 'category'))) await ctx.prepareHosts([baseUrlOf(input.url, input.redirects)])
  }
  return ctx
}

function hostKey(url: string): string | null {
  const parsed = URL.parse(url)
  return parsed ? normalizeHost(parsed.hostname) : null
}
