/**
 * keepStatistics (decision 113): a table that grew by more than half since it was last analyzed
 * (and by at least minChanges rows) is analyzed within a few ticks, one that changed less is
 * left to autovacuum, and nothing is analyzed once the keeper is stopped; a table whose dead
 * rows pass a tenth of its live ones is vacuumed. What was done is read from PostgreSQL's own
 * counters (pg_stat_user_tables), not from the keeper.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { openPostgres } from '../../../src/store/postgres/open'
import type { Pg } from '../../../src/store/postgres/pg'
import { keepStatistics } from '../../../src/store/postgres/statistics'
import { freshDatabase } from '../../helpers/postgres'

let sql: Pg
beforeAll(async () => {
  sql = await openPostgres(freshDatabase())
})
afterAll(async () => {
  await sql.close()
})

const analyzed = async (table: string): Promise<number> => Number((await sql`SELECT analyze_count FROM pg_stat_user_tables WHERE relname = ${table}`)[0].analyze_count)
const addObjects = (from: number, n: number) =>
  sql`INSERT INTO s3_objects (name, size, checksum, content_type) SELECT 'k' || i, i, 'c', 'text/plain' FROM generate_series(${from}::int, ${from + n - 1}::int) AS i`

async function until(what: string, check: () => Promise<boolean>, ms = 15_000) {
  const deadline = Date.now() + ms
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${ms} ms`)
    await Bun.sleep(50)
  }
}

test('a young table that grew is analyzed; one that changed a little is not; nothing after stop', async () => {
  // A fresh database: neither table was ever analyzed.
  expect(await analyzed('s3_objects')).toBe(0)
  expect(await analyzed('labels')).toBe(0)
  const stop = keepStatistics(sql, { tickMs: 50, minChanges: 200 })
  try {
    await sql`INSERT INTO labels (kind, tenant, key, value, ref) VALUES (0, 'acme', 'a', 'x', 1), (0, 'acme', 'b', 'y', 1)`
    await addObjects(0, 300)
    // The server publishes its change counts about once a second: the wait is for those.
    await until('s3_objects analyzed', async () => (await analyzed('s3_objects')) >= 1)
    const stats = (await sql`SELECT reltuples FROM pg_class WHERE relname = 's3_objects'`)[0]
    expect(Number(stats.reltuples)).toBe(300)
    // 100 more rows is a third of what was analyzed: not yet.
    await addObjects(300, 100)
    await Bun.sleep(2_000)
    expect(await analyzed('s3_objects')).toBe(1)
    expect(await analyzed('labels')).toBe(0)
    // 300 more (400 changes over 300 analyzed): again.
    await addObjects(400, 300)
    await until('s3_objects analyzed again', async () => (await analyzed('s3_objects')) >= 2)
  } finally {
    await stop()
  }
  const after = await analyzed('s3_objects')
  await addObjects(700, 2_000)
  await Bun.sleep(2_500)
  expect(await analyzed('s3_objects')).toBe(after)
}, 40_000)

test('a table whose updates left dead rows past a tenth of its live ones is vacuumed', async () => {
  const vacuums = async () => Number((await sql`SELECT vacuum_count FROM pg_stat_user_tables WHERE relname = 'hosts'`)[0].vacuum_count)
  await sql`INSERT INTO hosts (tenant, hash, domain, labels, created_at) SELECT 'acme', 'h' || i, 'h' || i || '.example', '{}', 1 FROM generate_series(1, 1000) AS i`
  expect(await vacuums()).toBe(0)
  const stop = keepStatistics(sql, { tickMs: 50, minChanges: 200 })
  try {
    // 50 dead rows of 1,000: under minChanges, nothing.
    await sql`UPDATE hosts SET created_at = 2 WHERE hash IN (SELECT 'h' || i FROM generate_series(1, 50) AS i)`
    await Bun.sleep(2_000)
    expect(await vacuums()).toBe(0)
    await sql`UPDATE hosts SET created_at = 3`
    await until('hosts vacuumed', async () => (await vacuums()) >= 1)
    const [row] = await sql`SELECT n_dead_tup FROM pg_stat_user_tables WHERE relname = 'hosts'`
    expect(Number(row.n_dead_tup)).toBeLessThan(200)
  } finally {
    await stop()
  }
}, 40_000)
