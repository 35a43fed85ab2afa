import type { Pg } from './pg'

/**
 * Keeps young tables' statistics current and their dead rows few (decision 113); autovacuum
 * does both, but looks once a minute by default.
 *
 * - Statistics. PostgreSQL plans a table it has not analyzed as if a run's rows were a few of
 *   many, and the hot statements of a crawl (a host's next rows, a batch's marks, its page
 *   records) then read the whole run's rows through an index on run_seq alone: a cost that grows
 *   with the run. A table changed by at least `minChanges` rows and by more than half its
 *   analyzed size is analyzed.
 * - Dead rows. A frontier row is updated as it is taken and as it is settled, and each update
 *   leaves an entry in the queue index behind until a vacuum: a host's next rows are found past
 *   every entry of the rows done since the last one, so each take costs more as the run goes. A
 *   table with at least `minChanges` dead rows, more than a tenth of its live ones, is vacuumed
 *   (which analyzes it too).
 *
 * Every `tickMs` (1 s); past their young days autovacuum's thresholds come first for the
 * statistics, and the dead rows' rule keeps a busy queue's index short. One process of a
 * cluster does it at a time: an advisory lock tried, not waited for.
 */
export function keepStatistics(sql: Pg, opts: { tickMs?: number; minChanges?: number } = {}): () => Promise<void> {
  const tickMs = opts.tickMs ?? 1_000
  const minChanges = opts.minChanges ?? 500
  let stopped = false
  let timer: ReturnType<typeof setTimeout> | null = null
  let running: Promise<void> = Promise.resolve()
  const tick = async () => {
    const tables = (await sql`SELECT s.relname,
        s.n_dead_tup >= ${minChanges} AND s.n_dead_tup > s.n_live_tup / 10 AS vacuum
      FROM pg_stat_user_tables s JOIN pg_class c ON c.oid = s.relid
      WHERE s.schemaname = current_schema()
        AND ((s.n_mod_since_analyze >= ${minChanges} AND s.n_mod_since_analyze > greatest(c.reltuples, 0) / 2)
          OR (s.n_dead_tup >= ${minChanges} AND s.n_dead_tup > s.n_live_tup / 10))
      ORDER BY s.relname`) as { relname: string; vacuum: boolean }[]
    if (!tables.length || stopped) return
    const names = (rows: { relname: string }[]) => rows.map((r) => `"${r.relname.replaceAll('"', '""')}"`).join(', ')
    // VACUUM runs outside a transaction: the lock is the session's, on a connection of its own.
    const conn = await sql.reserve()
    try {
      const [got] = await conn`SELECT pg_try_advisory_lock(${KEEPER_LOCK}) AS got`
      if (!(got as { got: boolean }).got) return
      try {
        const vacuum = tables.filter((t) => t.vacuum)
        const analyze = tables.filter((t) => !t.vacuum)
        if (vacuum.length) await conn.unsafe(`VACUUM (ANALYZE) ${names(vacuum)}`)
        if (analyze.length) await conn.unsafe(`ANALYZE ${names(analyze)}`)
      } finally {
        await conn`SELECT pg_advisory_unlock(${KEEPER_LOCK})`
      }
    } finally {
      conn.release()
    }
  }
  const schedule = () => {
    if (stopped) return
    timer = setTimeout(() => {
      // A database that is away, or a table being dropped, is the next tick's to try again.
      running = tick()
        .catch(() => {})
        .finally(schedule)
    }, tickMs)
    timer.unref()
  }
  schedule()
  return async () => {
    stopped = true
    if (timer) clearTimeout(timer)
    await running
  }
}

// Any constant every process agrees on, other than the migrations' lock.
const KEEPER_LOCK = 7_402_113
