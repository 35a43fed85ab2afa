/**
 * Migration 012 on a database whose runs were crawled before outcomes existed: each finished run
 * gets the outcome its rows tell (docs/crawl.md, "Outcomes"), and every run its failed URLs by
 * reason from its crawl log; the API then shows them like a new run's.
 */
import { afterAll, describe, expect, test } from 'bun:test'
import { Database } from 'bun:sqlite'
import { rmSync } from 'node:fs'
import { createSqliteRepositories } from '../../src/store'
import { migrate } from '../../src/store/db'
import { databaseAt } from '../helpers/old-database'

const dirs: string[] = []
afterAll(() => dirs.forEach((dir) => rmSync(dir, { recursive: true, force: true })))

type OldRun = { id: string; status: string; stop_reason: string | null; visits?: (number | null)[]; errors?: [string, string, number | null][] }

/** A trawl.db at schema 11 with these runs: visits by status, fetch error log entries as [url, reason, http status]. */
function version11(runs: OldRun[]): Database {
  const db = databaseAt(11, dirs)
  db.exec(`INSERT INTO jobs (tenant, id, name, config, labels, created_at, updated_at) VALUES ('t', 'j', 'j', '{}', '{}', 0, 0)`)
  for (const r of runs) {
    db.query(`INSERT INTO runs (tenant, id, job_seq, job_id, config, labels, status, stop_reason, created_at) VALUES ('t', ?, 1, 'j', '{}', '{}', ?, ?, 0)`).run(r.id, r.status, r.stop_reason)
    const seq = (db.query('SELECT seq FROM runs WHERE id = ?').get(r.id) as { seq: number }).seq
    r.visits?.forEach((status, i) => db.query('INSERT INTO visits (run_seq, hash, host_hash, depth, status, visited_at) VALUES (?, ?, ?, 0, ?, 0)').run(seq, `v${i}`, 'h', status))
    r.errors?.forEach(([url, reason, http], i) =>
      db
        .query(`INSERT INTO crawl_logs (run_seq, id, url, url_hash, host, step, status, error_reason, http_status, occurred_at) VALUES (?, ?, ?, ?, 'example.com', 'fetch', 'error', ?, ?, 0)`)
        .run(seq, `l${i}`, url, `hash-${url}`, reason, http),
    )
  }
  return db
}

describe('migration 012 on runs crawled before it', () => {
  test('outcomes from the stop reason and the visits; error counts from the crawl log, one per URL and reason', () => {
    const db = version11([
      { id: 'stopped', status: 'finished', stop_reason: 'manual', visits: [200] },
      {
        id: 'complete',
        status: 'finished',
        stop_reason: 'max_empty_evaluations',
        visits: [200, 404, null],
        errors: [
          ['/gone', 'http_status', 404],
          ['/x', 'dns', null],
          ['/y', 'dns', null],
          ['/z', 'connect', null],
          ['/z', 'connect', null],
          ['/w', 'interrupted', null],
        ],
      },
      { id: 'nothing-answered', status: 'finished', stop_reason: 'max_empty_evaluations', visits: [null], errors: [['/', 'connect', null]] },
      { id: 'only-404', status: 'finished', stop_reason: 'max_empty_evaluations', visits: [404], errors: [['/', 'http_status', 404]] },
      { id: 'limited', status: 'finished', stop_reason: 'max_urls', visits: [200, 200] },
      { id: 'depth', status: 'finished', stop_reason: 'max_depth', visits: [301] },
      { id: 'empty', status: 'finished', stop_reason: 'empty_seed' },
      { id: 'broke', status: 'finished', stop_reason: 'unknown', visits: [200] },
      { id: 'running', status: 'running', stop_reason: null, visits: [200, 500], errors: [['/e', 'http_status', 500]] },
    ])
    migrate(db)
    const store = createSqliteRepositories(db)
    const shown = (id: string) => {
      const run = store.runs.get('t', id)!
      return [run.stop_reason, run.outcome, run.error_counts]
    }
    expect(shown('stopped')).toEqual(['manual', 'stopped', {}])
    expect(shown('complete')).toEqual(['max_empty_evaluations', 'complete', { dns: 2, connect: 1, http_404: 1 }])
    expect(Object.keys(store.runs.get('t', 'complete')!.error_counts)).toEqual(['dns', 'connect', 'http_404'])
    expect(shown('nothing-answered')).toEqual(['max_empty_evaluations', 'failed', { connect: 1 }])
    expect(shown('only-404')).toEqual(['max_empty_evaluations', 'failed', { http_404: 1 }])
    expect(shown('limited')).toEqual(['max_urls', 'limited', {}])
    expect(shown('depth')).toEqual(['max_depth', 'limited', {}])
    expect(shown('empty')).toEqual(['empty_seed', 'failed', {}])
    expect(shown('broke')).toEqual(['unknown', 'failed', {}])
    // A run not finished has no outcome yet; its counts go on from these when it is crawled again.
    expect(shown('running')).toEqual([null, null, { http_500: 1 }])
    expect(
      store.runs
        .list('t', { outcomes: ['failed'] }, undefined, 100)
        .data.map((r) => r.id)
        .sort(),
    ).toEqual(['broke', 'empty', 'nothing-answered', 'only-404'])
    db.close()
  })
})
