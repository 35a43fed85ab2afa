import { anyFound } from '../parse/regex'
import { sameScope, type ScopeMode } from './domain'

export type ScopeConfig = { domains: ScopeMode; include: string[]; exclude: string[] }

/**
 * Which discovered URLs a run may follow (design.md §4 `scope`): within the seeds' hosts or
 * registrable domains, matching an include regex when there are any, and no exclude regex.
 * Category scope needs the host's pattern sets and is judged by the engine.
 */
export class Scope {
  private readonly seeds: URL[]

  constructor(
    seeds: string[],
    private readonly config: ScopeConfig,
  ) {
    this.seeds = seeds.map((s) => new URL(s))
  }

  /** Null when the URL is in scope, else why not (for the crawl log's detail). */
  whyOut(url: string): string | null {
    if (this.config.domains !== 'any') {
      const u = new URL(url)
      if (!this.seeds.some((seed) => sameScope(seed, u, this.config.domains))) {
        return this.config.domains === 'same_host' ? 'on another host than the seeds' : "outside the seeds' domains"
      }
    }
    if (this.config.include.length && !anyFound(this.config.include, url)) return 'matches no scope.include pattern'
    if (this.config.exclude.length && anyFound(this.config.exclude, url)) return 'matches a scope.exclude pattern'
    return null
  }
}
