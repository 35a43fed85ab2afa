/**
 * Migration 015 (decision 104): a visit and an artifact are found by URL through their link's
 * seq. Rows written before it get theirs from the catalogue; every read by URL (run links by url,
 * the crawl log's visit of a URL, artifacts by url_hashes, an export's artifacts) finds old and
 * new rows alike, per tenant; a second visit of a link by the run is still ignored.
 */
import { afterAll, describe, expect, test } from 'bun:test'
import { rmSync } from 'node:fs'
import { createSqliteRepositories } from '../../src/store'
import { migrate } from '../../src/store/db'
import { databaseAt } from '../helpers/old-database'
import { pageRecord } from '../helpers/page-record'

const dirs: string[] = []
afterAll(() => dirs.forEach((dir) => rmSync(dir, { recursive: true, force: true })))

const h = (c: string) => c.repeat(32)
const HOST = 'e'.repeat(32)

describe('migration 015 on a database crawled before it', () => {
  test('old visits and artifacts get their link seqs, and are found by URL as before, with new ones', () => {
    const db = databaseAt(14, dirs)
    try {
      db.exec(`INSERT INTO jobs (tenant, id, name, config, labels, created_at, updated_at) VALUES ('t', 'j', 'j', '{}', '{}', 0, 0), ('u', 'j', 'j', '{}', '{}', 0, 0)`)
      db.exec(`INSERT INTO runs (tenant, id, job_seq, job_id, config, labels, status, created_at) VALUES ('t', 'r', 1, 'j', '{}', '{}', 'finished', 0), ('u', 'r', 2, 'j', '{}', '{}', 'finished', 0)`)
      db.exec(`INSERT INTO hosts (tenant, hash, domain, created_at) VALUES ('t', '${HOST}', 'old.example', 0), ('u', '${HOST}', 'old.example', 0)`)
      // Tenant u catalogued the same URLs first: its links have other seqs.
      const link = db.query(`INSERT INTO links (tenant, hash, url, host_seq, created_at) VALUES (?, ?, ?, ?, 0)`)
      for (const c of ['a', 'b']) link.run('u', h(c), `https://old.example/${c}`, 2)
      for (const c of ['a', 'b', 'c']) link.run('t', h(c), `https://old.example/${c}`, 1)
      const visit = db.query(`INSERT INTO visits (run_seq, hash, host_hash, depth, status, visited_at) VALUES (?, ?, '${HOST}', 0, 200, ?)`)
      visit.run(1, h('a'), 1000)
      visit.run(1, h('b'), 2000)
      visit.run(2, h('a'), 1500)
      const artifact = db.query(
        `INSERT INTO artifacts (tenant, id, run_id, url_hash, blob_key, kind, pipeline_id, content_type, size, checksum, created_at) VALUES (?, ?, 'r', ?, ?, 'raw', NULL, 'text/html', 1, 'c', 0)`,
      )
      artifact.run('t', 'art-a', h('a'), 'k/a')
      artifact.run('t', 'art-b', h('b'), 'k/b')
      artifact.run('u', 'art-ua', h('a'), 'k/ua')
      migrate(db)

      const seqOf = (tenant: string, c: string) => (db.query('SELECT seq FROM links WHERE tenant = ? AND hash = ?').get(tenant, h(c)) as { seq: number }).seq
      expect(db.query('SELECT run_seq, hash, link_seq FROM visits ORDER BY seq').all()).toEqual([
        { run_seq: 1, hash: h('a'), link_seq: seqOf('t', 'a') },
        { run_seq: 1, hash: h('b'), link_seq: seqOf('t', 'b') },
        { run_seq: 2, hash: h('a'), link_seq: seqOf('u', 'a') },
      ])
      expect(db.query('SELECT id, link_seq FROM artifacts ORDER BY seq').all()).toEqual([
        { id: 'art-a', link_seq: seqOf('t', 'a') },
        { id: 'art-b', link_seq: seqOf('t', 'b') },
        { id: 'art-ua', link_seq: seqOf('u', 'a') },
      ])

      const repos = createSqliteRepositories(db)
      // A page recorded after the migration, beside the old ones; a second record of a link is ignored.
      db.transaction(() => repos.runGraph.recordPages(1, [pageRecord(h('c'), HOST, { visited_at: 3000, logged: 8 }), pageRecord(h('a'), HOST, { visited_at: 4000 })]))()
      repos.artifacts.insert({
        tenant: 't',
        id: 'art-c',
        run_id: 'r',
        url_hash: h('c'),
        blob_key: 'k/c',
        kind: 'raw',
        pipeline_id: null,
        content_type: 'text/html',
        size: 1,
        checksum: 'c',
        created_at: 5,
      })

      const visited = (tenant: string, run: number, hashes: string[]) =>
        repos.runGraph.visits(tenant, run, { url_hashes: hashes }, undefined, 10).data.map((v) => `${v.url}@${v.visited_at.slice(17, 23)}`)
      expect(visited('t', 1, [h('a'), h('c')])).toEqual(['https://old.example/a@01.000', 'https://old.example/c@03.000'])
      expect(visited('t', 1, [h('b')])).toEqual(['https://old.example/b@02.000'])
      expect(visited('u', 2, [h('a'), h('b')])).toEqual(['https://old.example/a@01.500'])
      // The crawl log's entries of one URL's visit, old and new.
      expect(repos.crawlLogs.loggedSince(1, h('c'), 'discover', 3000)).toBe(true)

      const byUrl = (tenant: string, hashes: string[]) => repos.artifacts.list(tenant, { url_hashes: hashes }, undefined, 10).data.map((a) => a.id)
      expect(byUrl('t', [h('a')])).toEqual(['art-a'])
      expect(byUrl('t', [h('c'), h('a'), h('b')])).toEqual(['art-c', 'art-b', 'art-a'])
      expect(byUrl('u', [h('a'), h('c')])).toEqual(['art-ua'])
      expect(repos.artifacts.forUrls('t', 'r', [h('b'), h('c')]).map((a) => a.id)).toEqual(['art-b', 'art-c'])
      expect(repos.artifacts.forUrls('u', 'r', [h('b'), h('c')])).toEqual([])
      expect(db.query("SELECT name FROM sqlite_master WHERE name IN ('artifacts_by_url', 'artifacts_by_link', 'visits_once') ORDER BY name").all()).toEqual([
        { name: 'artifacts_by_link' },
        { name: 'visits_once' },
      ])
    } finally {
      db.close()
    }
  })
})
