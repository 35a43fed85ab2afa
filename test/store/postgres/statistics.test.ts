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
/** The connection every write goes through, so that its statistics can be published at once. */
let conn: Pg & { release(): void }
beforeAll(async () => {
  sql = await openPostgres(freshDatabase())
  conn = (await sql.reserve()) as Pg & { release(): void }
})
afterAll(async () => {
  conn.release()
  await sql.close()
})

/** Makes the writer's change counts visible to every session now, not within the second or so the server takes. */
const published = async () => {
  await conn`SELECT pg_stat_force_next_flush()`
  await conn`SELECT 1 AS one`
}
/** Long enough for the keeper (ticking every 50 ms) to act on what was published. */
const ticks = () => Bun.sleep(500)

const analyzed = async (table: string): Promise<number> => Number((await sql`SELECT analyze_count FROM pg_stat_user_tables WHERE relname = ${table}`)[0].analyze_count)
const addObjects = async (from: number, n: number) => {
  await conn`INSERT INTO s3_objects (name, size, checksum, content_type) SELECT 'k' || i, i, 'c', 'text/plain' FROM generate_series(${from}::int, ${from + n - 1}::int) AS i`
  await published()
}

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
  const stop = keepStatistics(sql, { tickMs: 50, minChanges: 100 })
  try {
    await conn`INSERT INTO labels (kind, tenant, key, value, ref) VALUES (0, 'acme', 'a', 'x', 1), (0, 'acme', 'b', 'y', 1)`
    await addObjects(0, 300)
    await until('s3_objects analyzed', async () => (await analyzed('s3_objects')) >= 1)
    const stats = (await sql`SELECT reltuples FROM pg_class WHERE relname = 's3_objects'`)[0]
    expect(Number(stats.reltuples)).toBe(300)
    // 120 more rows: past minChanges, but not half of the 300 analyzed: not yet.
    await addObjects(300, 120)
    await ticks()
    expect(await analyzed('s3_objects')).toBe(1)
    expect(await analyzed('labels')).toBe(0)
    // 300 more (420 changes over 300 analyzed): again.
    await addObjects(420, 300)
    await until('s3_objects analyzed again', async () => (await analyzed('s3_objects')) >= 2)
  } finally {
    await stop()
  }
  const after = await analyzed('s3_objects')
  await addObjects(720, 2_000)
  await ticks()
  expect(await analyzed('s3_objects')).toBe(after)
}, 40_000)

test('a table whose updates left dead rows past a tenth of its live ones is vacuumed', async () => {
  const vacuums = async () => Number((await sql`SELECT vacuum_count FROM pg_stat_user_tables WHERE relname = 'hosts'`)[0].vacuum_count)
  await conn`INSERT INTO hosts (tenant, hash, domain, labels, created_at) SELECT 'acme', 'h' || i, 'h' || i || '.example', '{}', 1 FROM generate_series(1, 2000) AS i`
  await published()
  expect(await vacuums()).toBe(0)
  const stop = keepStatistics(sql, { tickMs: 50, minChanges: 100 })
  try {
    // 150 dead rows of 2,000: past minChanges, under a tenth: nothing.
    await conn`UPDATE hosts SET created_at = 2 WHERE hash IN (SELECT 'h' || i FROM generate_series(1, 150) AS i)`
    await published()
    await ticks()
    expect(await vacuums()).toBe(0)
    await conn`UPDATE hosts SET created_at = 3`
    await published()
    await until('hosts vacuumed', async () => (await vacuums()) >= 1)
    const [row] = await sql`SELECT n_dead_tup FROM pg_stat_user_tables WHERE relname = 'hosts'`
    expect(Number(row.n_dead_tup)).toBeLessThan(100)
  } finally {
    await stop()
  }
}, 40_000)
