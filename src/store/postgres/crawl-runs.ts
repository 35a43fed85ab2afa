import type { ClaimableRun, CrawlStore } from '../crawl-store'
import { first, numeric, type Pg } from './pg'

/** Finishes a running or pending run with its stop reason and outcome (docs/crawl.md, "Outcomes"); whether it did. */
export async function finish(sql: Pg, seq: number, reason: string, now: number, outcome: string | null): Promise<boolean> {
  const result = await sql`UPDATE runs SET status = 'finished', stop_reason = ${reason}, finished_at = ${now}, outcome = ${outcome}, lease_owner = NULL, lease_until = NULL
    WHERE seq = ${seq} AND status IN ('running', 'pending')`
  return result.count === 1
}

/**
 * Runs a runner may take, and their leases (the port of frontier.ts's run statements). Every
 * lease change is one conditional UPDATE: two processes claiming one run both reach the row,
 * the second waits for the first's row lock and then evaluates its WHERE against the row the
 * first left (READ COMMITTED), so only one of them takes it.
 */
export function pgRunLeases(sql: Pg): Pick<CrawlStore, 'claimable' | 'run' | 'heldRunning' | 'claimRun' | 'renew' | 'status' | 'finish'> {
  return {
    /** Running runs nobody holds first (resuming), then pending ones, oldest first. */
    claimable: async (now, limit) =>
      numeric<ClaimableRun>(
        await sql`SELECT seq, id, tenant, job_id, status, config, started_at, paused_ms, lease_owner FROM runs
          WHERE (status = 'running' AND (lease_owner IS NULL OR lease_until < ${now})) OR status = 'pending'
          ORDER BY status = 'pending', seq LIMIT ${limit}`,
      ),
    run: async (seq) => first<ClaimableRun>(await sql`SELECT seq, id, tenant, job_id, status, config, started_at, paused_ms, lease_owner FROM runs WHERE seq = ${seq}`),
    heldRunning: async (now) =>
      numeric<{ seq: number; lease_owner: string }>(await sql`SELECT seq, lease_owner FROM runs WHERE status = 'running' AND lease_owner IS NOT NULL AND lease_until >= ${now}`),
    /** `deadOwner` names a holder known to be dead whose lease may be taken early. */
    claimRun: async (seq, owner, now, until, deadOwner = null) => {
      const result = await sql`UPDATE runs SET status = 'running', started_at = coalesce(started_at, ${now}), lease_owner = ${owner}, lease_until = ${until}
        WHERE seq = ${seq} AND (status = 'pending' OR (status = 'running' AND (lease_owner IS NULL OR lease_until < ${now} OR lease_owner IN (${owner}, ${deadOwner ?? ''}))))`
      return result.count === 1
    },
    renew: async (seq, owner, until) => (await sql`UPDATE runs SET lease_until = ${until} WHERE seq = ${seq} AND lease_owner = ${owner} AND status = 'running'`).count === 1,
    status: async (seq) => first<{ status: string; paused_ms: number }>(await sql`SELECT status, paused_ms FROM runs WHERE seq = ${seq}`),
    finish: async (seq, reason, now, outcome) => void (await finish(sql, seq, reason, now, outcome)),
  }
}
