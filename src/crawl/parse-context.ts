import type { ParseContext } from '../parse/pipeline'
import type { Pipeline } from '../parse/pipeline-schema'
import type { Store } from '../store'
import { hostHash, normalizeHost } from '../core/url'

type PatternSets = ReturnType<ParseContext['patternSets']>

/**
 * A tenant's pattern sets and data maps as one execution's pipelines see them (decision 63: read
 * once per execution). The parsers ask synchronously; the store answers asynchronously, so the
 * engine `prepare`s what a page will ask before it parses (the data maps its pipelines name, the
 * pattern sets of the hosts of the URLs at hand).
 */
export class EngineParseContext implements ParseContext {
  private readonly setsByHost = new Map<string, PatternSets>()
  private readonly maps = new Map<string, ReturnType<ParseContext['dataMap']>>()

  constructor(
    private readonly store: Store,
    private readonly tenant: string,
  ) {}

  /** The data maps the pipelines name, read once. */
  async preparePipelines(pipelines: Pipeline[]) {
    for (const p of pipelines) {
      for (const step of p.steps ?? []) {
        if (step.kind !== 'data_map' || this.maps.has(step.id)) continue
        this.maps.set(step.id, (await this.store.dataMaps.get(this.tenant, step.id))?.map ?? null)
      }
    }
  }

  /** Reads the pattern sets of these URLs' hosts that are not read yet. */
  async prepare(urls: Iterable<string>) {
    for (const url of urls) {
      const host = hostKey(url)
      if (host === null || this.setsByHost.has(host)) continue
      this.setsByHost.set(host, await this.store.patterns.forHost(this.tenant, hostHash(host)))
    }
  }

  patternSets(url: string): PatternSets {
    const host = hostKey(url)
    return host === null ? [] : (this.setsByHost.get(host) ?? [])
  }

  dataMap(id: string) {
    return this.maps.get(id) ?? null
  }
}

function hostKey(url: string): string | null {
  const parsed = URL.parse(url)
  return parsed ? normalizeHost(parsed.hostname) : null
}
