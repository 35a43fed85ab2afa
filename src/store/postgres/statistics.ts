import { first, type Pg } from './pg'

/**
 * Keeps the planner's statistics of young tables current (decision 113). PostgreSQL plans a
 * table it has not analyzed as if a run's rows were a few of many, and the hot statements of a
 * crawl (a host's next rows, a batch's marks, its page records) then read the whole run's rows
 * through an index on run_seq alone, a cost that grows with the run. Autovacuum analyzes a table
 * once a tenth of it changed, but looks only once a minute by default: a fresh database crawls
 * its first minute, and a table that doubles in that minute crawls it, on such plans. So every
 * `tickMs` this looks for tables changed by at least `minChanges` rows and by more than half their
 * analyzed size, and analyzes them; past their young days autovacuum gets there first. One
 * process of a cluster analyzes at a time (an advisory lock tried, not waited for).
 */
export function keepStatistics(sql: Pg, opts: { tickMs?: number; minChanges?: number } = {}): () => Promise<void> {
  const tickMs = opts.tickMs ?? 1_000
  const minChanges = opts.minChanges ?? 500
  let stopped = false
  let timer: ReturnType<typeof setTimeout> | null = null
  let running: Promise<void> = Promise.resolve()
  const tick = async () => {
    const stale = await sql`SELECT s.relname FROM pg_stat_user_tables s JOIN pg_class c ON c.oid = s.relid
      WHERE s.schemaname = current_schema() AND s.n_mod_since_analyze >= ${minChanges} AND s.n_mod_since_analyze > greatest(c.reltuples, 0) / 2
      ORDER BY s.relname`
    if (!stale.length || stopped) return
    await sql.begin(async (tx) => {
      if (!first<{ got: boolean }>(await tx`SELECT pg_try_advisory_xact_lock(${ANALYZE_LOCK}) AS got`)!.got) return
      await tx.unsafe(`ANALYZE ${stale.map((r: { relname: string }) => `"${r.relname.replaceAll('"', '""')}"`).join(', ')}`)
    })
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
const ANALYZE_LOCK = 7_402_113
