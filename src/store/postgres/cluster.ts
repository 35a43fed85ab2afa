import type { Claimed, HostGrant, SharedCrawl } from '../crawl-store'
import { first, numeric, type Pg } from './pg'

const CLAIMED_COLUMNS = 'seq, hash, url, host, depth, parent, kind, attempts'

/**
 * How processes on one database crawl a run together (decision 112): the run's workers, its host
 * queues' leases under the cluster's per-host ceiling, and the rows a holder takes as it starts
 * them. Everything a process holds has a lease it renews; what a process that died held is taken
 * over once its lease lapses.
 */
export function pgSharedCrawl(sql: Pg): SharedCrawl {
  return {
    claimHosts: (runSeq, owner, want, now, until, perHost, ceiling) =>
      sql.begin(async (tx) => {
        const worker = first(await tx`SELECT 1 AS one FROM run_workers WHERE run_seq = ${runSeq} AND owner = ${owner} AND lease_until >= ${now}`)
        if (!worker) return []
        // Free hosts with work: no holder, or one whose lease lapsed. SKIP LOCKED: a host another
        // process is claiming right now is not waited for. Sorted by name, so the ceiling's
        // per-host locks below are taken in one order by every process and cannot deadlock.
        const free = numeric<{ host: string; failures: number; next_at: number }>(
          await tx`SELECT h.host, h.failures, h.next_at FROM run_hosts h
            WHERE h.run_seq = ${runSeq} AND (h.owner IS NULL OR h.lease_until < ${now})
              AND EXISTS (SELECT 1 FROM frontier f WHERE f.run_seq = ${runSeq} AND f.host = h.host AND f.state IN (0, 1))
            ORDER BY h.next_at, h.host LIMIT ${want * 2} FOR UPDATE SKIP LOCKED`,
        ).sort((a, b) => (a.host < b.host ? -1 : a.host > b.host ? 1 : 0))
        const grants: HostGrant[] = []
        for (const h of free) {
          if (grants.length >= want) break
          // The ceiling counts slots held on this host by every run's holders that are alive.
          await tx`SELECT pg_advisory_xact_lock(hashtext(${h.host}))`
          const used = first<{ n: number }>(
            await tx`SELECT coalesce(sum(slots), 0)::int AS n FROM run_hosts WHERE host = ${h.host} AND owner IS NOT NULL AND lease_until >= ${now} AND run_seq <> ${runSeq}`,
          )!.n
          const slots = Math.min(perHost, ceiling - used)
          if (slots <= 0) continue
          await tx`UPDATE run_hosts SET owner = ${owner}, lease_until = ${until}, slots = ${slots} WHERE run_seq = ${runSeq} AND host = ${h.host}`
          // Rows a holder that is gone had taken: in flight when it died, or finished and not
          // committed. They go back to the queue and are named (with when they were taken), to be
          // logged as fetched again.
          const interrupted = numeric<Claimed & { taken_at: number }>(
            await tx.unsafe(
              `UPDATE frontier f SET state = 0, taken_by = NULL, lease_until = NULL
               FROM (SELECT o.seq, o.lease_until FROM frontier o
                     WHERE o.run_seq = $1 AND o.host = $2 AND o.state = 1
                       AND NOT EXISTS (SELECT 1 FROM run_workers w WHERE w.run_seq = $1 AND w.owner = o.taken_by AND w.lease_until >= $3)
                     FOR UPDATE) old
               WHERE f.run_seq = $1 AND f.seq = old.seq
               RETURNING ${CLAIMED_COLUMNS.split(', ')
                 .map((c) => `f.${c}`)
                 .join(', ')}, coalesce(old.lease_until, 0) AS taken_at`,
              [runSeq, h.host, now],
            ),
          )
          grants.push({ host: h.host, slots, nextAt: h.next_at, failures: h.failures, interrupted })
        }
        return grants
      }),

    async renewHosts(runSeq, owner, until) {
      const worker = await sql`UPDATE run_workers SET lease_until = ${until} WHERE run_seq = ${runSeq} AND owner = ${owner}`
      if (worker.count !== 1) return null
      return numeric<{ host: string }>(await sql`UPDATE run_hosts SET lease_until = ${until} WHERE run_seq = ${runSeq} AND owner = ${owner} RETURNING host`).map((r) => r.host)
    },

    async releaseHosts(runSeq, owner, hosts) {
      if (!hosts.length) return
      await sql`UPDATE run_hosts h SET owner = NULL, lease_until = NULL, slots = 0, next_at = GREATEST(h.next_at, x.next_at)
        FROM unnest(${sql.array(
          hosts.map((x) => x.host),
          'text',
        )}, ${sql.array(
          hosts.map((x) => x.nextAt),
          'int8',
        )}) AS x (host, next_at)
        WHERE h.run_seq = ${runSeq} AND h.host = x.host AND h.owner = ${owner}`
    },

    async take(runSeq, owner, wants, now) {
      if (!wants.length) return []
      // Per host, its first rows that are due, only for hosts this owner holds; marked taken at
      // once (state 1), so the rows a holder that dies had taken are what it had in flight.
      // Ordered by host and seq, which the host's queue index gives without a sort: the host is
      // then part of the index scan even where the table has no statistics yet. The inner LIMIT
      // is a constant, the most any host is asked for rounded up to a power of two (a few
      // statement texts in all): under a limit the planner cannot read (w.n), it sorted all of a
      // big host's queued rows to return two (decision 113). Rows are locked as the outer LIMIT
      // pulls them, so no more than w.n are.
      const most = 2 ** Math.ceil(Math.log2(Math.max(1, ...wants.map((w) => w.n))))
      return numeric<Claimed>(
        await sql.unsafe(
          `WITH w AS (
             SELECT x.host, x.n FROM unnest($3::text[], $4::int[]) AS x (host, n)
             WHERE EXISTS (SELECT 1 FROM run_hosts h WHERE h.run_seq = $1 AND h.host = x.host AND h.owner = $2)
           ), picked AS (
             SELECT p.seq FROM w CROSS JOIN LATERAL (
               SELECT q.seq FROM (
                 SELECT f.seq FROM frontier f WHERE f.run_seq = $1 AND f.host = w.host AND f.state = 0 AND f.not_before <= $5
                 ORDER BY f.host, f.seq LIMIT ${most} FOR UPDATE SKIP LOCKED
               ) q LIMIT w.n
             ) p
           )
           UPDATE frontier f SET state = 1, taken_by = $2, lease_until = $5
           FROM picked WHERE f.run_seq = $1 AND f.seq = picked.seq
           RETURNING ${CLAIMED_COLUMNS.split(', ')
             .map((c) => `f.${c}`)
             .join(', ')}`,
          [runSeq, owner, wants.map((w) => w.host), wants.map((w) => w.n), now],
        ),
      ).sort((a, b) => a.seq - b.seq)
    },

    async giveBack(runSeq, owner, seqs) {
      if (!seqs.length) return
      await sql`UPDATE frontier SET state = 0, taken_by = NULL, lease_until = NULL
        WHERE run_seq = ${runSeq} AND seq = ANY(${sql.array(seqs, 'int8')}) AND state = 1 AND taken_by = ${owner}`
    },

    async seeding(runSeq, owner, on) {
      await sql`UPDATE run_workers SET seeding = ${on} WHERE run_seq = ${runSeq} AND owner = ${owner}`
    },

    async outlook(runSeq, now) {
      const row = first<{ remaining: boolean; free_hosts: number; workers: number }>(
        await sql`SELECT
            (EXISTS (SELECT 1 FROM frontier WHERE run_seq = ${runSeq} AND state IN (0, 1))
              OR EXISTS (SELECT 1 FROM run_workers WHERE run_seq = ${runSeq} AND seeding AND lease_until >= ${now})) AS remaining,
            (SELECT count(*)::int FROM run_hosts h WHERE h.run_seq = ${runSeq} AND (h.owner IS NULL OR h.lease_until < ${now})
               AND EXISTS (SELECT 1 FROM frontier f WHERE f.run_seq = ${runSeq} AND f.host = h.host AND f.state IN (0, 1))) AS free_hosts,
            (SELECT count(*)::int FROM run_workers WHERE run_seq = ${runSeq} AND lease_until >= ${now}) AS workers`,
      )!
      return { remaining: row.remaining ? 1 : 0, freeHosts: row.free_hosts, workers: row.workers }
    },

    async watch(onChange) {
      const subscription = await sql.listen('trawl_runs', () => onChange())
      return () => subscription.unlisten()
    },
  }
}
