import { postWebhook, type WebhookAnswer, type WebhookPost } from '../fetch/webhook'
import type { Logger } from '../log'
import type { WebhookStore } from '../store/types'
import { afterAttempt, type DueDelivery } from '../store/webhook-model'
import { hostname } from 'node:os'
import { pidAlive, pidOnThisHost, processOwner } from '../util/process'
import { signedHeaders } from './signature'

/** How often leases of gone processes of this host are looked for (and at start). */
const DEAD_CHECK_MS = 30_000

/** What one attempt came to, for a counter (the deliverer keeps none itself). */
export type AttemptOutcome = 'delivered' | 'failed_attempt' | 'gave_up'

export type DelivererOptions = {
  store: Pick<WebhookStore, 'claim' | 'record' | 'leaseOwners' | 'releaseLeases'>
  log: Logger
  allowPrivate: boolean
  /** A delivery claimed is this process's for this long; a process killed meanwhile leaves it to lapse. */
  leaseMs?: number
  /** How often the outbox is looked at when nothing pokes it. */
  pollMs?: number
  /** Deliveries claimed (and sent at once) per round. */
  batch?: number
  /** The request; tests give their own. */
  post?: (p: WebhookPost) => Promise<WebhookAnswer>
}

/**
 * Sends the outbox (decision 116): claims due deliveries under a lease, POSTs each one's stored
 * bytes signed for this attempt, records the attempt (the store moves it on: delivered, a retry
 * after the backoff, or failed a day after it was written). Runs in `trawl serve` beside the
 * runner and the scheduler; every process sharing a PostgreSQL database runs one, and the lease
 * keeps them from sending the same delivery.
 */
export class Deliverer {
  /** Told of every attempt's outcome (the lead's metrics hook). */
  onAttempt?: (outcome: AttemptOutcome) => void
  readonly owner = processOwner()
  private readonly leaseMs: number
  private readonly pollMs: number
  private readonly batch: number
  private readonly post: (p: WebhookPost) => Promise<WebhookAnswer>
  private loop: Promise<void> | null = null
  private stopped = false
  private poked = false
  private wake: (() => void) | null = null
  private deadCheckedAt = 0

  constructor(private readonly opts: DelivererOptions) {
    this.leaseMs = opts.leaseMs ?? 60_000
    this.pollMs = opts.pollMs ?? 1000
    this.batch = opts.batch ?? 16
    this.post = opts.post ?? postWebhook
  }

  start() {
    this.loop ??= this.run()
  }

  /** Something may be due now (this process moved a run): look before the next poll. */
  poke() {
    this.poked = true
    this.wake?.()
  }

  /** Stops claiming; the attempts in flight finish (each within its timeout) and are recorded. */
  async stop() {
    this.stopped = true
    this.wake?.()
    await this.loop
  }

  private async run() {
    while (!this.stopped) {
      let claimed = 0
      try {
        claimed = await this.round()
      } catch (err) {
        this.opts.log.warn('webhook deliveries could not be claimed or recorded', { error: (err as Error).message })
      }
      // A full batch: more may be due at once.
      if (claimed < this.batch && !this.stopped) await this.sleep()
    }
  }

  /** Until the next poll, or a poke (one that came while a round ran ends it at once). */
  private sleep(): Promise<void> {
    if (this.poked) {
      this.poked = false
      return Promise.resolve()
    }
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer)
        this.wake = null
        this.poked = false
        resolve()
      }
      const timer = setTimeout(done, this.pollMs)
      this.wake = done
    })
  }

  private async round(): Promise<number> {
    if (Date.now() - this.deadCheckedAt >= DEAD_CHECK_MS) await this.releaseDead()
    const due = await this.opts.store.claim(this.owner, Date.now(), this.leaseMs, this.batch)
    await Promise.all(due.map((d) => this.deliver(d)))
    return due.length
  }

  /**
   * Leases of processes of this host that are gone (killed while sending): their deliveries need
   * not wait for the lease to lapse. A holder with this process's pid but another name is an
   * earlier process that had the same pid (a container's restart), gone too.
   */
  private async releaseDead() {
    this.deadCheckedAt = Date.now()
    const me = hostname()
    for (const owner of await this.opts.store.leaseOwners(Date.now())) {
      const pid = pidOnThisHost(owner, me)
      if (pid === null || owner === this.owner || (pid !== process.pid && pidAlive(pid))) continue
      const released = await this.opts.store.releaseLeases(owner)
      if (released) this.opts.log.info('webhook deliveries of a process that is gone released', { owner, deliveries: released })
    }
  }

  private async deliver(d: DueDelivery) {
    const at = Date.now()
    const answer = await this.post({ url: d.url, headers: signedHeaders(d.secret, d.id, d.payload, at), body: d.payload, allowPrivate: this.opts.allowPrivate })
    const now = Date.now()
    const result = { at, duration_ms: now - at, status_code: answer.status_code, error: answer.error, delivered: answer.error === null }
    await this.opts.store.record(this.owner, d, result, now)
    const outcome: AttemptOutcome = result.delivered ? 'delivered' : afterAttempt(d, result, now).status === 'failed' ? 'gave_up' : 'failed_attempt'
    if (!result.delivered)
      this.opts.log[outcome === 'gave_up' ? 'warn' : 'info']('webhook attempt failed', { delivery: d.id, url: d.url, attempt: d.attempts + 1, error: answer.error, gave_up: outcome === 'gave_up' })
    try {
      this.onAttempt?.(outcome)
    } catch {
      // A counter's failure is not the delivery's.
    }
  }
}
