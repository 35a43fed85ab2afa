import { categorize } from '../extract/patterns'
import { contentTypeMatches } from './document'
import type { ParseContext, SkipReason } from './pipeline'
import type { Guard } from './pipeline-schema'
import { passes } from './regex'

/**
 * The first guard of a pipeline that the document fails, or null when all pass. `url` is the
 * document's final URL (after redirects): the address the content is really at.
 */
export function guardFailure(guards: readonly Guard[], contentType: string, url: string, ctx: ParseContext): SkipReason | null {
  for (const g of guards) {
    if (g.kind === 'content_type' && !contentTypeMatches(contentType, g.values)) return 'content_type'
    if (g.kind === 'url' && !passes(url, g.include, g.exclude)) return 'url'
    if (g.kind === 'category') {
      // User regexes run here, so on a parse worker, never on the thread that answers requests.
      const category = categorize(url, ctx.patternSets(url))
      if (category === null || !(g.categories as string[]).includes(category)) return 'category'
    }
  }
  return null
}
