import type { ClaimableRun, CrawlStore } from '../crawl-store'
import { first, numeric, type Pg } from './pg'

/** Finishes a running or pending run with its stop reason and outcome (docs/crawl.md, "Outcomes"); whether it did. Its workers and host leases go with it (002-cluster.sql). */
export async function finish(sql: Pg, seq: number, reason: string, now: number, outcome: string | null): Promise<boolean> {
  const result = await sql`UPDATE runs SET status = 'finished', stop_reason = ${reason}, finished_at = ${now}, outcome = ${outcome}, lease_owner = NULL, lease_until = NULL
    WHERE seq = ${seq} AND status IN ('running', 'pending')`
  return result.count === 1
}

/**
 * Runs a runner may join, and its membership (decision 112). On PostgreSQL a run is not held
 * by one process: any process may join a running run as one of its workers, each with a lease
 * it renews; the work itself is leased by host queue (cluster.ts).
 */
export function pgRunLeases(sql: Pg): Pick<CrawlStore, 'claimable' | 'run' | 'heldRunning' | 'claimRun' | 'renew' | 'status' | 'finish'> {
  return {
    /** Running runs first (to join), then pending ones, oldest first. */
    claimable: async (_now, limit) =>
      numeric<ClaimableRun>(
        await sql`SELECT seq, id, tenant, job_id, status, config, started_at, paused_ms, lease_owner FROM runs
          WHERE status IN ('running', 'pending') ORDER BY status = 'pending', seq LIMIT ${limit}`,
      ),
    run: async (seq) => first<ClaimableRun>(await sql`SELECT seq, id, tenant, job_id, status, config, started_at, paused_ms, lease_owner FROM runs WHERE seq = ${seq}`),
    /** Workers of running runs whose leases are current (a runner spots the ones of its host whose process died). */
    heldRunning: async (now) =>
      numeric<{ seq: number; lease_owner: string }>(
        await sql`SELECT w.run_seq AS seq, w.owner AS lease_owner FROM run_workers w JOIN runs r ON r.seq = w.run_seq
          WHERE r.status = 'running' AND w.lease_until >= ${now}`,
      ),
    /**
     * Joins the run: a pending one starts; `deadOwner` names a worker known to be dead, whose
     * membership and host leases end now instead of when they lapse.
     */
    claimRun: (seq, owner, now, until, deadOwner = null) =>
      sql.begin(async (tx) => {
        const started = await tx`UPDATE runs SET status = 'running', started_at = coalesce(started_at, ${now}) WHERE seq = ${seq} AND status IN ('pending', 'running')`
        if (started.count !== 1) return false
        if (deadOwner) {
          await tx`DELETE FROM run_workers WHERE run_seq = ${seq} AND owner = ${deadOwner}`
          await tx`UPDATE run_hosts SET lease_until = 0 WHERE run_seq = ${seq} AND owner = ${deadOwner}`
        }
        // A process joining again (its last execution of the run left it without a word: the
        // database was away) starts afresh: what it took then is marked as taken by a holder that
        // is gone, so whoever claims the host next requeues and logs it, and its hosts are free.
        await tx`UPDATE frontier SET taken_by = ${owner + ' (left)'} WHERE run_seq = ${seq} AND state = 1 AND taken_by = ${owner}`
        await tx`UPDATE run_hosts SET owner = NULL, lease_until = NULL, slots = 0 WHERE run_seq = ${seq} AND owner = ${owner}`
        await tx`INSERT INTO run_workers (run_seq, owner, lease_until) VALUES (${seq}, ${owner}, ${until})
          ON CONFLICT (run_seq, owner) DO UPDATE SET lease_until = excluded.lease_until`
        return true
      }),
    renew: async (seq, owner, until) =>
      (await sql`UPDATE run_workers w SET lease_until = ${until} FROM runs r WHERE w.run_seq = ${seq} AND w.owner = ${owner} AND r.seq = w.run_seq AND r.status = 'running'`).count === 1,
    status: async (seq) => first<{ status: string; paused_ms: number }>(await sql`SELECT status, paused_ms FROM runs WHERE seq = ${seq}`),
    finish: async (seq, reason, now, outcome) => void (await finish(sql, seq, reason, now, outcome)),
  }
}
