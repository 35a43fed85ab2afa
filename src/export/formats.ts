import type { Run } from '../store/runs'
import type { PageRecord } from './pages'

/** One JSONL line: the record as JSON, its newline included. */
export const jsonlLine = (r: PageRecord): string => `${JSON.stringify(r)}\n`

/**
 * The top of an llms format export (llms-full.txt style): a title naming what was crawled and a
 * one-line summary, as llmstxt.org's files begin. The seeds come from the run's config.
 */
export function llmsHeader(run: Pick<Run, 'id' | 'config'>): string {
  const seeds = (run.config.seeds as string[] | undefined) ?? []
  const first = seeds[0] ? URL.parse(seeds[0]) : null
  const title = first ? first.host : `run ${run.id}`
  const from = seeds.length ? ` crawled from ${seeds.join(', ')}` : ''
  return `# ${title}\n\n> The pages of trawl run ${run.id}${from}, as markdown, in visit order.\n\n`
}

/**
 * One page of an llms format export: a rule, its title as a heading, its source URL and its
 * markdown. A page without markdown (failed, not HTML or text, no raw body) has no section.
 */
export function llmsSection(r: PageRecord): string {
  if (r.markdown === null) return ''
  const title = (r.title ?? '').replace(/\s+/g, ' ').trim() || r.final_url
  return `---\n\n# ${title}\n\nSource: ${r.final_url}\n\n${r.markdown.trim()}\n\n`
}
