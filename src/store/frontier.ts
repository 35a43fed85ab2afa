import type { Database } from 'bun:sqlite'

/** Frontier row states (003-crawl.sql). */
export const QUEUED = 0
export const LEASED = 1
export const DONE = 2
export const FAILED = 3
export const PAGE = 0
export const ASSET = 1

export type FrontierEntry = { hash: string; url: string; host: string; depth: number; parent: string | null; kind: number }
/** A frontier row the engine holds: `seq` is its key within the run. */
export type Claimed = FrontierEntry & { attempts: number; seq: number }
export type RunCounters = { queued: number; visited: number; failed: number; bytes: number; fetched: number; depth_cut: number }
export type ClaimableRun = { seq: number; id: string; tenant: string; job_id: string; status: string; config: string; started_at: number | null; paused_ms: number; lease_owner: string | null }
export type RobotsRecord = { status: number | null; body: string | null }

/**
 * The crawl engine's SQL (design.md §5 and its rules 1-4): the durable frontier,
 * per-host robots records, run leases and counters. Statements are prepared once; the engine
 * calls them inside its own batched transactions.
 */
export function frontierRepository(db: Database) {
  const insert = db.query('INSERT OR IGNORE INTO frontier (run_seq, hash, url, host, depth, parent, kind, state, seq) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)')
  const setState = db.query('UPDATE frontier SET state = ?3, lease_until = NULL WHERE run_seq = ?1 AND seq = ?2')
  const requeue = db.query('UPDATE frontier SET state = 0, lease_until = NULL, attempts = attempts + 1, not_before = ?3 WHERE run_seq = ?1 AND seq = ?2')
  const reclaim = db.query('UPDATE frontier SET state = 0, lease_until = NULL WHERE run_seq = ?1 AND state = 1')
  const queuedRows = db.query('SELECT seq, hash, url, host, depth, parent, kind, attempts, not_before FROM frontier WHERE run_seq = ?1 AND state IN (0, 1) ORDER BY seq')
  const hashes = db.query('SELECT hash FROM frontier WHERE run_seq = ?1')
  const maxSeq = db.query('SELECT coalesce(max(seq), 0) AS n FROM frontier WHERE run_seq = ?1')
  const countState = db.query('SELECT state, count(*) AS n FROM frontier WHERE run_seq = ?1 GROUP BY state')
  const failQueued = db.query('UPDATE frontier SET state = 3, lease_until = NULL WHERE run_seq = ?1 AND state IN (0, 1)')
  const getRobots = db.query('SELECT robots_status AS status, robots_body AS body FROM run_hosts WHERE run_seq = ?1 AND host = ?2')
  const putRobots = db.query('INSERT INTO run_hosts (run_seq, host, robots_status, robots_body) VALUES (?1, ?2, ?3, ?4) ON CONFLICT (run_seq, host) DO UPDATE SET robots_status = ?3, robots_body = ?4')
  const hostFailures = db.query('SELECT host, failures FROM run_hosts WHERE run_seq = ?1 AND failures > 0')
  const putHostFailures = db.query('INSERT INTO run_hosts (run_seq, host, failures) VALUES (?1, ?2, ?3) ON CONFLICT (run_seq, host) DO UPDATE SET failures = ?3')
  const counters = db.query('SELECT queued, visited, failed, bytes, fetched, depth_cut FROM runs WHERE seq = ?1')
  const saveCounters = db.query('UPDATE runs SET queued = ?2, visited = ?3, failed = ?4, bytes = ?5, fetched = ?6, depth_cut = ?7 WHERE seq = ?1')
  const claimable = db.query(
    `SELECT seq, id, tenant, job_id, status, config, started_at, paused_ms, lease_owner FROM runs
     WHERE (status = 'running' AND (lease_owner IS NULL OR lease_until < ?1)) OR status = 'pending'
     ORDER BY status = 'pending', seq LIMIT ?2`,
  )
  const runSeq = db.query('SELECT seq FROM runs WHERE tenant = ?1 AND id = ?2')
  const runRow = db.query('SELECT seq, id, tenant, job_id, status, config, started_at, paused_ms, lease_owner FROM runs WHERE seq = ?1')
  const heldRunning = db.query("SELECT seq, lease_owner FROM runs WHERE status = 'running' AND lease_owner IS NOT NULL AND lease_until >= ?1")
  const claimRun = db.query(
    `UPDATE runs SET status = 'running', started_at = coalesce(started_at, ?3), lease_owner = ?2, lease_until = ?4
     WHERE seq = ?1 AND (status = 'pending' OR (status = 'running' AND (lease_owner IS NULL OR lease_until < ?3 OR lease_owner IN (?2, ?5))))`,
  )
  const renew = db.query("UPDATE runs SET lease_until = ?3 WHERE seq = ?1 AND lease_owner = ?2 AND status = 'running'")
  const release = db.query('UPDATE runs SET lease_owner = NULL, lease_until = NULL WHERE seq = ?1 AND lease_owner = ?2')
  const holder = db.query('SELECT tenant FROM runs WHERE seq = ?1 AND lease_owner = ?2')
  const status = db.query('SELECT status, paused_ms FROM runs WHERE seq = ?1')
  const finish = db.query(
    "UPDATE runs SET status = 'finished', stop_reason = ?2, finished_at = ?3, outcome = ?4, lease_owner = NULL, lease_until = NULL WHERE seq = ?1 AND status IN ('running', 'pending')",
  )
  const errorCounts = db.query('SELECT error_counts FROM runs WHERE seq = ?1')
  const saveErrorCounts = db.query('UPDATE runs SET error_counts = ?2 WHERE seq = ?1')
  const pageFetched = db.query('SELECT EXISTS (SELECT 1 FROM visits WHERE run_seq = ?1 AND status < 400) AS yes')

  return {
    /**
     * Inserts URLs with seqs from `firstSeq`. The caller dedupes by URL (the engine's map of the
     * run's hashes): the frontier is keyed by seq.
     */
    enqueue(runSeq: number, entries: FrontierEntry[], firstSeq: number, state = QUEUED): void {
      entries.forEach((e, i) => insert.run(runSeq, e.hash, e.url, e.host, e.depth, e.parent, e.kind, state, firstSeq + i))
    },
    done: (runSeq: number, seq: number) => void setState.run(runSeq, seq, DONE),
    failed: (runSeq: number, seq: number) => void setState.run(runSeq, seq, FAILED),
    requeue: (runSeq: number, seq: number, notBefore: number) => void requeue.run(runSeq, seq, notBefore),
    /** Leases left by a process that died go back to the queue (design.md §5 rule 3). */
    reclaim: (runSeq: number) => reclaim.run(runSeq).changes,
    /** Every URL still to visit, in discovery order (a resumed execution's queues). */
    queued: (runSeq: number) => queuedRows.all(runSeq) as (Claimed & { not_before: number })[],
    hashes: (runSeq: number) => (hashes.values(runSeq) as [string][]).map((r) => r[0]),
    maxSeq: (runSeq: number) => (maxSeq.get(runSeq) as { n: number }).n,
    counts(runSeq: number): Record<'queued' | 'leased' | 'done' | 'failed', number> {
      const out = { queued: 0, leased: 0, done: 0, failed: 0 }
      for (const r of countState.all(runSeq) as { state: number; n: number }[]) out[(['queued', 'leased', 'done', 'failed'] as const)[r.state]!] = r.n
      return out
    },
    failQueued: (runSeq: number) => failQueued.run(runSeq).changes,
    robots: (runSeq: number, host: string) => (getRobots.get(runSeq, host) as RobotsRecord | null) ?? null,
    saveRobots: (runSeq: number, host: string, rec: RobotsRecord) => void putRobots.run(runSeq, host, rec.status, rec.body),
    /** Hosts of the run with consecutive failed fetches (network errors), and how many. */
    hostFailures: (runSeq: number) => hostFailures.all(runSeq) as { host: string; failures: number }[],
    /** A host's count of consecutive failed fetches; a row without robots.txt yet keeps it null. */
    saveHostFailures: (runSeq: number, host: string, failures: number) => void putHostFailures.run(runSeq, host, failures),
    counters: (runSeq: number) => counters.get(runSeq) as RunCounters,
    saveCounters: (runSeq: number, c: RunCounters) => void saveCounters.run(runSeq, c.queued, c.visited, c.failed, c.bytes, c.fetched, c.depth_cut),
    /** Runs a runner may take: running ones nobody holds first (resuming), then pending ones, oldest first. */
    claimable: (now: number, limit: number) => claimable.all(now, limit) as ClaimableRun[],
    run: (seq: number) => runRow.get(seq) as ClaimableRun | null,
    runSeq: (tenant: string, id: string) => (runSeq.get(tenant, id) as { seq: number } | null)?.seq ?? null,
    /** Running runs whose lease is still current, with their holders (to spot holders that died). */
    heldRunning: (now: number) => heldRunning.all(now) as { seq: number; lease_owner: string }[],
    /** Takes a run for `owner`; `deadOwner` names a holder known to be dead whose lease may be taken early. */
    claimRun: (seq: number, owner: string, now: number, until: number, deadOwner: string | null = null) => claimRun.run(seq, owner, now, until, deadOwner ?? '').changes === 1,
    renew: (seq: number, owner: string, until: number) => renew.run(seq, owner, until).changes === 1,
    release: (seq: number, owner: string) => void release.run(seq, owner),
    /**
     * The run's tenant when `owner` still holds its lease, else null (a stalled process may have
     * lost it to another, or the run is gone: a deleted run's seq can come back for a new run).
     */
    heldBy: (seq: number, owner: string) => (holder.get(seq, owner) as { tenant: string } | null)?.tenant ?? null,
    status: (seq: number) => status.get(seq) as { status: string; paused_ms: number } | null,
    /** Finishes a running or pending run with its stop reason and outcome (docs/crawl.md, "Outcomes"). */
    finish: (seq: number, reason: string, now: number, outcome: string | null = null) => finish.run(seq, reason, now, outcome).changes === 1,
    /** The run's URLs that failed, by reason (a JSON object kept beside the counters). */
    errorCounts: (seq: number) => JSON.parse((errorCounts.get(seq) as { error_counts: string } | null)?.error_counts ?? '{}') as Record<string, number>,
    saveErrorCounts: (seq: number, counts: Record<string, number>) => void saveErrorCounts.run(seq, JSON.stringify(counts)),
    /** Whether any URL of the run was answered below 400: a run without one failed. */
    pageFetched: (seq: number) => (pageFetched.get(seq) as { yes: number }).yes === 1,
  }
}
export type FrontierRepository = ReturnType<typeof frontierRepository>
