/**
 * What an execution's commits carry (decision 102): pages committed together on time and on
 * count, never a page at a time, even when nothing is stored but the records.
 */
import { describe, expect, test } from 'bun:test'
import type { CrawlBatch, CrawlStore } from '../../src/store/crawl-store'
import { useCrawlEnv } from '../helpers/crawl-run'
import { crawlSite, tree, withSite } from '../helpers/crawl-site'

const env = useCrawlEnv()

/** Counts the batches the engine hands the store, and the pages in each, while `fn` runs. */
async function countingCommits<T>(fn: () => Promise<T>): Promise<{ result: T; pagesPerCommit: number[] }> {
  const crawl: CrawlStore = env.api.store.crawl
  const commit = crawl.commit
  const pagesPerCommit: number[] = []
  crawl.commit = (runSeq: number, owner: string, batch: CrawlBatch, end) => {
    if (batch.pages.length) pagesPerCommit.push(batch.pages.length)
    return commit.call(crawl, runSeq, owner, batch, end)
  }
  try {
    return { result: await fn(), pagesPerCommit }
  } finally {
    crawl.commit = commit
  }
}

describe('commits', () => {
  test('a crawl that stores no bodies commits its pages together, not one at a time; every page is recorded once', () =>
    // Answers spread over time (5-35 ms): pages finish one by one, as on a real site.
    withSite(crawlSite({ pages: tree(3, 4, '/', (path) => ({ delayMs: 5 + ((path.length * 7) % 31) })).pages }), async (site) => {
      const pages = tree(3, 4).levels.flat()
      const { result: run, pagesPerCommit } = await countingCommits(() =>
        env.crawl({ seeds: [site.url('/')], limits: { max_depth: 10 }, politeness: { concurrency: 16, per_host_concurrency: 16 }, store: { raw: false, parsed: false } }),
      )
      expect(run.stats).toMatchObject({ visited: pages.length, failed: 0, queued: 0 })
      expect(pagesPerCommit.reduce((a, b) => a + b, 0)).toBe(pages.length)
      // 121 pages at 16 slots: a commit waits for half the slots (or 250 ms), so most carry 8 pages.
      expect(pagesPerCommit.length).toBeLessThanOrEqual(Math.ceil(pages.length / 4))
      expect(Math.max(...pagesPerCommit)).toBeGreaterThanOrEqual(8)
      expect((await env.visits(run.id)).length).toBe(pages.length)
    }))

  test('with one slot a page is committed before the next is fetched: a kill loses at most that page', () =>
    withSite(crawlSite({ pages: tree(2, 3).pages }), async (site) => {
      const pages = tree(2, 3).levels.flat()
      const { result: run, pagesPerCommit } = await countingCommits(() => env.crawl({ seeds: [site.url('/')], limits: { max_depth: 10 }, politeness: { concurrency: 1, per_host_concurrency: 1 } }))
      expect(run.stats).toMatchObject({ visited: pages.length, failed: 0 })
      expect(pagesPerCommit.every((n) => n === 1)).toBe(true)
      expect(pagesPerCommit.length).toBe(pages.length)
    }))
})
