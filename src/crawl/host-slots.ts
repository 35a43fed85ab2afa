import { retryAfterMs } from '../fetch/retry'
import type { FetchResult } from '../fetch/types'
import type { Claimed } from '../store/crawl-store'
import type { LogReason } from './page-batch'
import { ALLOW_ALL_RULES, type AgentRules } from './robots'

export type Host = {
  key: string
  origin: string
  inFlight: number
  /** Requests it may have in flight when the cluster's per-host ceiling granted fewer than per_host_concurrency (a shared run). */
  slots?: number
  /** Earliest start of the next request: politeness delay, backoff. */
  nextAt: number
  delayMs: number
  robots: AgentRules | null
  robotsLoading: boolean
  /** The one robots.txt load of this host, awaited by everyone who needs it. */
  robotsLoad: Promise<void> | null
  failures: number
  /**
   * Why robots.txt got no answer (a connection refused, a timeout…): the host's URLs are not
   * fetched, and each fails with this reason rather than being called disallowed.
   */
  unreachable?: { error_reason: LogReason; error_detail: string }
  /** Consecutive 429/503 answers, for the backoff's exponent. */
  throttled: number
  /** The catalogue's hash of the host name (no port), which visits record: taken once per host. */
  hash?: string
  /**
   * The host's queued URLs in discovery order, held here as well as in the frontier: the
   * frontier is what a restart resumes from; this is what the dispatcher reads, so dispatching
   * costs no query (design.md §5 rule 2). `delayed` are requeued ones waiting for their time.
   */
  buffer: Claimed[]
  delayed: { entry: Claimed; at: number }[]
}

const BACKOFF_CAP_MS = 60_000

/**
 * Per-host politeness of one execution (design.md §5): each host's queue, its slots in flight,
 * the delay between its requests, its backoff after 429/503 and its failures in a row.
 */
export class HostSlots {
  private readonly hosts = new Map<string, Host>()

  constructor(
    private readonly delayMs: number,
    private readonly respectRobots: boolean,
  ) {}

  get(key: string): Host {
    let h = this.hosts.get(key)
    if (!h) {
      h = {
        key,
        origin: '',
        inFlight: 0,
        nextAt: 0,
        delayMs: this.delayMs,
        robots: this.respectRobots ? null : ALLOW_ALL_RULES,
        robotsLoading: false,
        robotsLoad: null,
        failures: 0,
        throttled: 0,
        buffer: [],
        delayed: [],
      }
      this.hosts.set(key, h)
    }
    return h
  }

  /** The host of `key` if this execution met it. */
  find(key: string): Host | undefined {
    return this.hosts.get(key)
  }

  all(): IterableIterator<Host> {
    return this.hosts.values()
  }

  /** Requeued URLs whose not-before time has come go back to the host's queue. */
  release(host: Host, now: number) {
    if (!host.delayed.length) return
    const due = host.delayed.filter((d) => d.at <= now)
    if (!due.length) return
    host.delayed = host.delayed.filter((d) => d.at > now)
    for (const d of due) host.buffer.push(d.entry)
  }

  /** 429/503: the host waits Retry-After (capped) or an exponential backoff before its next request. */
  backoff(host: Host, r: FetchResult): number {
    const header = r.headers.find(([n]) => n === 'retry-after')?.[1]
    const wait = retryAfterMs(header, Date.now(), BACKOFF_CAP_MS) ?? Math.min(1000 * 2 ** Math.min(host.throttled, 6), BACKOFF_CAP_MS)
    host.throttled++
    host.nextAt = Math.max(host.nextAt, Date.now() + wait)
    return wait
  }

  /** URLs waiting in every host's queue, delayed ones included. */
  queued(): number {
    let n = 0
    for (const h of this.hosts.values()) n += h.buffer.length + h.delayed.length
    return n
  }

  /** Whether some host could start a request now. */
  ready(now: number): boolean {
    for (const h of this.hosts.values()) if ((h.buffer.length > 0 || h.delayed.some((d) => d.at <= now)) && h.nextAt <= now) return true
    return false
  }

  /** Whether a robots.txt fetch is under way: its entry belongs in the execution's last commit. */
  robotsLoading(): boolean {
    for (const h of this.hosts.values()) if (h.robotsLoading) return true
    return false
  }

  /** How long the dispatcher may sleep before a host's delay or backoff ends (5 ms .. `maxMs`). */
  nextWakeMs(now: number, perHost: number, maxMs: number): number {
    let next = maxMs
    for (const h of this.hosts.values()) {
      if (h.buffer.length && h.inFlight < perHost && h.nextAt > now) next = Math.min(next, h.nextAt - now)
      for (const d of h.delayed) next = Math.min(next, Math.max(d.at, h.nextAt) - now)
    }
    return Math.max(5, Math.min(next, maxMs))
  }
}
