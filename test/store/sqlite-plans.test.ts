// The SQLite engine's query plans for the run graph lists (GET /v1/runs/{run_id}/links and
// /edges): EXPLAIN QUERY PLAN of the statements its repositories build. The lists' behaviour on
// every engine is test/api/run-graph.test.ts.
import { afterAll, describe, expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createSqliteRepositories } from '../../src/store'
import { openDatabase } from '../../src/store/db'
import { edgeWalkStatement } from '../../src/store/run-edges'
import type { RunGraphQuery, VisitFilter } from '../../src/store/run-graph'

const dir = mkdtempSync(join(tmpdir(), 'trawl-plans-'))
const db = openDatabase(dir)
const repos = createSqliteRepositories(db)
afterAll(() => {
  db.close()
  rmSync(dir, { recursive: true, force: true })
})

const A = 'a.example'

/** The query plan of a page, as SQLite's EXPLAIN QUERY PLAN lines. */
function plan(q: RunGraphQuery, select: string, after?: number): string {
  const built = q.build(select, after, 10)
  if (!built) return '(no query)'
  return (db.query(`EXPLAIN QUERY PLAN ${built.sql}`).all(...built.params) as { detail: string }[]).map((r) => r.detail).join('\n')
}
const sorts = (p: string) => p.includes('TEMP B-TREE FOR ORDER BY')
const visitPlan = (f: VisitFilter, after?: number) => plan(repos.runGraph.visitQuery('acme', 1, f), 'v.seq', after)
const edgePlan = (linkSets: string[][], fromSeq: number) => {
  const built = edgeWalkStatement(1, linkSets, fromSeq, 10)
  return (db.query(`EXPLAIN QUERY PLAN ${built.sql}`).all(...built.params) as { detail: string }[]).map((r) => r.detail).join('\n')
}
const LINK_LOOKUP = /SEARCH l USING (COVERING )?INDEX sqlite_autoindex_links_1 \(tenant=\? AND hash=\?\)/

// A page walks the run's rows in order from the cursor or looks up a bounded set of them, and
// reaches each link by its (tenant, hash) key: never a scan of the link catalogue.
describe('run graph query plans', () => {
  test('visits, unfiltered or by depth, time and host: an ordered walk of (run_seq, seq), no sort', () => {
    for (const f of [{}, { depth: [1], visited_after: '2026-01-01T00:00:00Z', hosts: [A] }] as VisitFilter[]) {
      const p = visitPlan(f, 40)
      expect(p).toMatch(/SEARCH v USING INDEX visits_by_run \(run_seq=\? AND seq>\?\)/)
      expect(p).toMatch(LINK_LOOKUP)
      expect(sorts(p)).toBe(false)
    }
  })

  test('visits by link: a lookup of (run_seq, link), the few matches sorted', () => {
    const p = visitPlan({ urls: [`https://${A}/`], depth: [0] })
    expect(p).toMatch(/SEARCH v USING (COVERING )?INDEX visits_once \(run_seq=\? AND link_seq=\?/)
    expect(p).toMatch(LINK_LOOKUP)
  })

  test('edges, unfiltered or by host: an ordered walk of the run’s visits from the cursor’s, no sort', () => {
    const p = edgePlan([], 40)
    expect(p).toMatch(/SEARCH v USING INDEX visits_by_run \(run_seq=\? AND seq>\?\)/)
    expect(sorts(p)).toBe(false)
  })

  test('edges by link: the same walk, each visit tested for the links as its own or among its children', () => {
    const p = edgePlan([['a'.repeat(32)], ['b'.repeat(32), 'c'.repeat(32)]], 1)
    // No index of children: the run's visits are walked in order until a page is full.
    expect(p).toMatch(/SEARCH v USING INDEX visits_by_run \(run_seq=\? AND seq>\?\)/)
    expect(p).not.toMatch(/SCAN v\b/)
    expect(sorts(p)).toBe(false)
  })
})
