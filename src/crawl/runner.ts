import { hostname } from 'node:os'
import { pidAlive, pidOnThisHost, processOwner } from '../util/process'
import type { ClaimableRun } from '../store/crawl-store'
import type { CrawlConfig } from './manifest'
import { LEASE_MS, RunExecution, type EngineDeps, type Outcome } from './execution'
import { sweepJournals } from './interrupted'
import { finishBodyDeletions } from '../blob/run-bodies'

const POLL_MS = 500

/**
 * Takes runs and crawls them (design.md §5): running runs nobody holds first (a resume after a
 * restart or a pause), then pending runs oldest first, at most `maxActive` at once. Each run is
 * held by a lease in the database, so two processes on one data dir never crawl the same run.
 */
export class Runner {
  private readonly active = new Map<number, { execution: RunExecution; done: Promise<Outcome> }>()
  private timer: ReturnType<typeof setTimeout> | null = null
  private stopped = false
  private polling = false
  private sweeping: Promise<void> = Promise.resolve()
  private unwatch: Promise<(() => Promise<void>) | null> = Promise.resolve(null)
  /** Called with each execution as it ends (the CLI's summary, tests). */
  onFinish: ((runSeq: number, outcome: Outcome) => void) | null = null

  constructor(
    private readonly deps: EngineDeps,
    private readonly maxActive: number,
    /** Only these runs (the one-shot `trawl crawl`); all runs when absent. */
    private readonly only?: number,
    /** The name its leases carry: a lease naming a pid of this host that no longer runs was left by a crash. `trawl crawl` leases its run before the runner exists. */
    readonly owner = processOwner(),
  ) {}

  start() {
    // Beside the runner, which takes none of their runs: the journals of paused, finished and
    // deleted runs, and the bodies of deleted runs a stopped process had not finished deleting.
    const { store, blobs, log } = this.deps
    const going = () => !this.stopped
    this.sweeping = (async () => {
      await sweepJournals(store.crawl, blobs, log, going)
      await finishBodyDeletions(blobs, store.artifacts, log, await store.artifacts.pendingBodyDeletions(), going)
    })().catch((err) => log.warn('the start-up sweep of journals and deleted runs failed; the next start tries again', { error: String(err) }))
    // A shared store tells every process when a run is created, paused, resumed or stopped
    // anywhere: this runner looks for work, and its executions read their run's state, at once.
    const shared = store.crawl.shared
    if (shared)
      this.unwatch = shared
        .watch(() => {
          this.notify()
          for (const { execution } of this.active.values()) execution.runChanged()
        })
        .catch((err) => {
          log.warn('listening for run changes failed; runs are polled', { error: String(err) })
          return null
        })
    this.poll()
  }

  /** The start-up sweep of journals and deleted runs' bodies, done (it runs beside the runner's work). */
  swept(): Promise<void> {
    return this.sweeping
  }

  /** Looks for work now rather than at the next poll (a run was created or resumed). */
  notify() {
    if (!this.stopped) queueMicrotask(() => void this.poll())
  }

  execution(runSeq: number): RunExecution | null {
    return this.active.get(runSeq)?.execution ?? null
  }

  /** Shutdown: every execution checkpoints (in-flight work requeued) and lets its run go. */
  async stop() {
    this.stopped = true
    if (this.timer) clearTimeout(this.timer)
    for (const { execution } of this.active.values()) execution.shutdown()
    await Promise.all([...this.active.values()].map((a) => a.done))
    await this.sweeping
    await (
      await this.unwatch
    )?.()
  }

  private async poll() {
    if (this.stopped || this.polling) return
    this.polling = true
    try {
      await this.claim()
    } catch (err) {
      this.deps.log.error('runner poll failed', { error: String(err) })
    } finally {
      this.polling = false
      if (this.timer) clearTimeout(this.timer)
      if (!this.stopped) this.timer = setTimeout(() => void this.poll(), POLL_MS)
    }
  }

  private async claim() {
    const room = this.maxActive - this.active.size
    if (room <= 0) return
    const crawl = this.deps.store.crawl
    const now = Date.now()
    const dead = await this.deadOwners(now)
    const candidates = [...(await crawl.claimable(now, room * 4 + 8)), ...dead.map((d) => d.run)]
    // `trawl crawl` creates its run already leased to this runner, so that no other process's
    // runner on the data dir can take it first.
    const mine = this.only !== undefined ? await crawl.run(this.only) : null
    if (mine && mine.status === 'running' && mine.lease_owner === this.owner) candidates.unshift(mine)
    let taken = 0
    for (const run of candidates) {
      if (taken >= room) break
      if (this.active.has(run.seq) || (this.only !== undefined && run.seq !== this.only)) continue
      const deadOwner = dead.find((d) => d.run.seq === run.seq)?.owner ?? null
      if (this.stopped || !(await crawl.claimRun(run.seq, this.owner, now, now + LEASE_MS, deadOwner))) continue
      const fresh = (await crawl.run(run.seq))!
      let execution: RunExecution
      try {
        execution = new RunExecution(
          { seq: run.seq, id: run.id, tenant: run.tenant, config: JSON.parse(run.config) as Required<CrawlConfig>, started_at: fresh.started_at!, paused_ms: fresh.paused_ms },
          this.deps,
          this.owner,
        )
      } catch (err) {
        // A run whose stored state cannot be read back cannot be resumed: it ends `unknown`.
        this.deps.log.error('run cannot be resumed', { run: run.id, error: String(err) })
        await crawl.finish(run.seq, 'unknown', Date.now(), 'failed')
        continue
      }
      const done = execution.execute().then((outcome) => {
        this.active.delete(run.seq)
        this.deps.log.info('run left', { run: run.id, ...outcome })
        this.onFinish?.(run.seq, outcome)
        this.notify()
        return outcome
      })
      this.active.set(run.seq, { execution, done })
      this.deps.log.info('run started', { run: run.id, tenant: run.tenant })
      taken++
    }
  }

  /** Running runs held by a process of this host that is gone (killed): their leases need not be waited out. */
  private async deadOwners(now: number) {
    const me = hostname()
    const out: { run: ClaimableRun; owner: string }[] = []
    for (const held of await this.deps.store.crawl.heldRunning(now)) {
      const pid = pidOnThisHost(held.lease_owner, me)
      if (pid === null || held.lease_owner === this.owner || pidAlive(pid)) continue
      const run = await this.deps.store.crawl.run(held.seq)
      if (run) out.push({ run, owner: held.lease_owner })
    }
    return out
  }
}
