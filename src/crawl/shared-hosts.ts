import type { Claimed, HostGrant, SharedCrawl } from '../store/crawl-store'
import type { Host } from './host-slots'
import { interruptedEntry } from './interrupted'
import type { RunExecution } from './execution'

/** How often a process looks for host queues to take while it has room, and for rows of hosts whose queue looked empty. */
const CLAIM_EVERY_MS = 50
const EMPTY_HOST_RETRY_MS = 100
/** A host whose queue stays empty this long is given back, so another process's discoveries can reach a holder with room. */
const IDLE_RELEASE_MS = 300
/** How often a busy process gives back idle hosts and reads where the run stands. */
const LOOK_EVERY_MS = 500

/**
 * One execution's part of a run that many processes crawl together (a shared store, decision
 * 112). The process holds some of the run's host queues; it fetches only their URLs, taking
 * each row from the frontier as it is about to start, so what a process that dies had taken is
 * what it had in flight. It claims more hosts while its concurrency has room and its fair share
 * of the run's hosts allows, and gives back hosts that stay empty.
 */
export class SharedHosts {
  private readonly held = new Map<string, { host: Host; emptySince: number; askedAt: number }>()
  private claiming: Promise<void> | null = null
  private looking: Promise<boolean> | null = null
  private lastLook = 0
  private taking: Promise<void> | null = null
  private lastClaim = 0
  /** The last outlook: what the claims go by. */
  private freeHosts = 1
  private workers = 1

  constructor(
    private readonly x: RunExecution,
    private readonly shared: SharedCrawl,
    private readonly owner: string,
    /** The cluster's ceiling of requests in flight to one host, over every run and process. */
    private readonly ceiling: number,
    /** How long a claim or renewal holds (the execution's lease). */
    private readonly leaseMs: number,
  ) {}

  /**
   * Called by the dispatcher before it starts fetches: takes rows for held hosts that have room
   * and nothing buffered, and claims hosts when there is room for more. Never waits.
   */
  pump(now: number) {
    if (this.x.leaving) return
    if (!this.taking) {
      const wants: { host: string; n: number }[] = []
      for (const [key, h] of this.held) {
        const host = h.host
        const room = (host.slots ?? 1) - host.inFlight - host.buffer.length
        if (room <= 0 || host.buffer.length || host.nextAt > now + 50 || now - h.askedAt < (h.emptySince ? EMPTY_HOST_RETRY_MS : 0)) continue
        h.askedAt = now
        wants.push({ host: key, n: host.delayMs > 0 ? 1 : room })
      }
      if (wants.length) this.taking = this.take(wants).finally(() => (this.taking = null))
    }
    if (!this.looking && now - this.lastLook >= LOOK_EVERY_MS) void this.look(now)
    if (!this.claiming && now - this.lastClaim >= CLAIM_EVERY_MS && this.wantMore() > 0) {
      this.lastClaim = now
      this.claiming = this.claim(now).finally(() => (this.claiming = null))
    }
  }

  /**
   * Hosts to claim: enough hosts with work to fill the run's concurrency (a held host whose queue
   * is empty fills nothing: on a site whose pages link across hosts, queues empty and refill all
   * the time), and no more in all than twice that or a fair share of the hosts with work.
   */
  private wantMore(): number {
    const perHost = this.x.cfg.politeness.per_host_concurrency!
    const concurrency = this.x.cfg.politeness.concurrency!
    const toFill = Math.ceil(concurrency / perHost) + 1
    const busy = this.busyHeld()
    const fair = Math.max(1, Math.ceil((this.freeHosts + busy) / Math.max(1, this.workers)))
    return Math.min(toFill - busy, Math.min(2 * toFill, fair + 1) - this.held.size)
  }

  private busyHeld(): number {
    let n = 0
    for (const { host } of this.held.values()) if (host.inFlight || host.buffer.length) n++
    return n
  }

  private async claim(now: number) {
    const want = this.wantMore()
    if (want <= 0 || this.freeHosts === 0) return
    const perHost = this.x.cfg.politeness.per_host_concurrency!
    let grants: HostGrant[]
    try {
      grants = await this.shared.claimHosts(this.x.run.seq, this.owner, want, now, now + this.leaseMs, perHost, this.ceiling)
    } catch (err) {
      this.x.deps.log.warn('claiming host queues failed; the next look tries again', { run: this.x.run.id, error: String(err) })
      return
    }
    for (const g of grants) {
      const host = this.x.hosts.get(g.host)
      host.slots = g.slots
      host.nextAt = Math.max(host.nextAt, g.nextAt)
      host.failures = g.failures
      this.held.set(g.host, { host, emptySince: 0, askedAt: 0 })
      for (const row of g.interrupted) await this.logInterrupted(row)
    }
    // None: no free host is left until the next look says otherwise. (Fewer than asked may be
    // hosts another claim had locked at that moment: the next claim asks again.)
    if (grants.length === 0) this.freeHosts = 0
    if (grants.length) this.x.poke()
  }

  /** A row a dead holder had taken: logged as fetched again, unless its own journal said so already. */
  private async logInterrupted(row: Claimed & { taken_at: number }) {
    if (await this.x.deps.store.crawl.loggedSince(this.x.run.seq, row.hash, 'fetch', row.taken_at)) return
    const where = { url: row.url, url_hash: row.hash, host: row.host, depth: row.depth, ...(row.parent ? { parent_url_hash: row.parent } : {}) }
    this.x.batch.log(interruptedEntry(where, 'fetch', 'retried'), row.taken_at)
  }

  private async take(wants: { host: string; n: number }[]) {
    let rows: Claimed[]
    try {
      rows = await this.shared.take(this.x.run.seq, this.owner, wants, Date.now())
    } catch (err) {
      this.x.deps.log.warn('taking queued URLs failed; the next look tries again', { run: this.x.run.id, error: String(err) })
      return
    }
    const now = Date.now()
    const got = new Set<string>()
    const unheld: number[] = []
    // Rows another process queued: this one's seen set learns them, so their pages' own URLs are not queued again.
    this.x.discovery.seen(rows.map((r) => r.hash))
    for (const row of rows) {
      const h = this.held.get(row.host)
      if (!h) {
        unheld.push(row.seq)
        continue
      }
      got.add(row.host)
      h.host.origin ||= new URL(row.url).origin
      h.host.buffer.push(row)
      h.emptySince = 0
    }
    for (const { host } of wants) {
      const h = this.held.get(host)
      if (h && !got.has(host)) h.emptySince ||= now
    }
    // A host given back while the take was under way: its rows go back to the queue, not astray.
    if (unheld.length) await this.giveBack(unheld)
    if (rows.length) this.x.poke()
  }

  private async giveBack(seqs: number[]) {
    try {
      await this.shared.giveBack(this.x.run.seq, this.owner, seqs)
    } catch (err) {
      this.x.deps.log.warn('taken URLs could not be given back; they wait for this process to leave the run', { run: this.x.run.id, error: String(err) })
    }
  }

  /**
   * The evaluation of a shared run: it is over when no row is queued or in flight in any
   * process. Hosts that stayed empty are given back meanwhile. Answers whether the run is done.
   */
  async evaluate(now: number): Promise<boolean> {
    // A look begun before the caller's last commit may not see the rows that commit queued.
    await this.looking
    return this.look(now)
  }

  private look(now: number): Promise<boolean> {
    this.lastLook = now
    this.looking = this.lookNow(now)
      .catch((err) => {
        this.x.deps.log.warn('reading where a shared run stands failed; the next look tries again', { run: this.x.run.id, error: String(err) })
        return false
      })
      .finally(() => (this.looking = null))
    return this.looking
  }

  private async lookNow(now: number): Promise<boolean> {
    // A take under way may be bringing rows of a host that looks idle: its answer first.
    await this.taking
    const idle: { host: string; nextAt: number }[] = []
    for (const [key, h] of this.held) {
      if (h.emptySince && now - h.emptySince >= IDLE_RELEASE_MS && !h.host.inFlight && !h.host.buffer.length && !h.host.delayed.length && !h.host.robotsLoading)
        idle.push({ host: key, nextAt: h.host.nextAt })
    }
    if (idle.length) {
      for (const { host } of idle) this.held.delete(host)
      await this.shared.releaseHosts(this.x.run.seq, this.owner, idle)
    }
    const o = await this.shared.outlook(this.x.run.seq, now)
    this.freeHosts = o.freeHosts
    this.workers = o.workers
    return o.remaining === 0
  }

  /** Tells the other processes the run is not over while this one reads its sitemaps. */
  seeding(on: boolean): Promise<void> {
    return this.shared.seeding(this.x.run.seq, this.owner, on)
  }

  /** Renews the worker and its hosts; false when the process is no longer a worker of the run. */
  async renew(until: number): Promise<boolean> {
    const still = await this.shared.renewHosts(this.x.run.seq, this.owner, until)
    if (still === null) return false
    // A host whose lease lapsed (a process stalled past it) may have been taken by another.
    const kept = new Set(still)
    const dropped: number[] = []
    for (const [key, h] of this.held) {
      if (kept.has(key)) continue
      this.held.delete(key)
      for (const row of h.host.buffer.splice(0)) dropped.push(row.seq)
    }
    if (dropped.length) await this.giveBack(dropped)
    return true
  }
}
