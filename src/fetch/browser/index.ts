import { untilAborted } from '../../util/abort'
import type { Logger } from '../../log'
import type { Lookup } from '../address-guard'
import { FetchError } from '../errors'
import type { FetchResult } from '../types'
import { PageFetch } from './page'
import type { BrowserFetch } from './page-request'
import { BrowserSession } from './session'
import { Semaphore } from './waiting'

export type { BrowserFetch } from './page-request'

export type BrowserClientOptions = {
  /** A path, or a command name looked up on PATH. */
  chromium: string
  allowPrivate: boolean
  maxBodyBytes: number
  log: Logger
  /** Pages open at once; further fetches wait their turn. */
  maxPages?: number
  /** How the address guard resolves names (tests answer for names of their own). The system resolver. */
  lookup?: Lookup
}

/** After a failed launch, fetches and `available()` answer from that failure for this long. */
const LAUNCH_RETRY_MS = 5000

/**
 * The browser fetch client: one Chromium, started on first use and again after it dies, with a
 * fresh browser context (cookies, cache, proxy) and page per fetch.
 */
export class BrowserClient {
  private session: BrowserSession | null = null
  private launching: Promise<BrowserSession> | null = null
  private failure: { error: FetchError; at: number } | null = null
  private closed = false
  private readonly slots: Semaphore

  constructor(private readonly opts: BrowserClientOptions) {
    this.slots = new Semaphore(Math.max(1, opts.maxPages ?? 4))
  }

  /** The running browser's process id, if any (tests kill it to show the relaunch). */
  get pid(): number | null {
    return this.session?.alive ? this.session.process.pid : null
  }

  async fetch(req: BrowserFetch, signal: AbortSignal): Promise<FetchResult> {
    const started = performance.now()
    let url: URL
    try {
      url = new URL(req.url)
    } catch {
      throw new TypeError(`the browser client needs an absolute URL, not ${req.url}`)
    }
    // Checked here because the interceptor only sees what Chromium sends to the network: a file:
    // URL would be read from disk without ever pausing there.
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new FetchError('blocked_address', `only http and https URLs are fetched, not ${url.protocol}`)
    const timeout = (what: string) => () => new FetchError('timeout', `${what} before the deadline (${req.url})`, true)
    const release = await this.slots.acquire(signal).catch(() => {
      throw timeout('no browser page became free')()
    })
    try {
      const session = await untilAborted(this.browser(), signal, timeout('Chromium was not ready'))
      const result = await new PageFetch(session, req, { maxBodyBytes: this.opts.maxBodyBytes, log: this.opts.log }).run(signal)
      // Waiting for a free page and starting the browser are part of what the caller waited for.
      return { ...result, timing: { total_ms: Math.round(performance.now() - started) } }
    } finally {
      release()
    }
  }

  /** Whether Chromium runs or can be started; starts it when it is not running. */
  async available(): Promise<boolean> {
    try {
      await this.browser()
      return true
    } catch {
      return false
    }
  }

  /** Closes every page and the browser; in-flight fetches fail with browser_unavailable. */
  async close(): Promise<void> {
    this.closed = true
    const session = this.session ?? (await this.launching?.catch(() => null)) ?? null
    this.session = null
    await session?.close()
  }

  private browser(): Promise<BrowserSession> {
    if (this.closed) return Promise.reject(new FetchError('browser_unavailable', 'the browser client is closed'))
    if (this.session?.alive) return Promise.resolve(this.session)
    if (this.launching) return this.launching
    if (this.failure && performance.now() - this.failure.at < LAUNCH_RETRY_MS) return Promise.reject(this.failure.error)
    if (this.session) this.opts.log.warn('chromium is gone; starting it again', { pid: this.session.process.pid })
    this.session = null
    const launching = BrowserSession.start({
      command: this.opts.chromium,
      allowPrivate: this.opts.allowPrivate,
      maxBodyBytes: this.opts.maxBodyBytes,
      log: this.opts.log,
      lookup: this.opts.lookup,
    }).then(
      async (session) => {
        if (this.closed) {
          await session.close()
          throw new FetchError('browser_unavailable', 'the browser client is closed')
        }
        this.session = session
        this.failure = null
        return session
      },
      (err) => {
        const error =
          err instanceof FetchError ? err : new FetchError('browser_unavailable', `Chromium at "${this.opts.chromium}" could not be started: ${(err as Error).message}; set TRAWL_CHROMIUM to its path`)
        this.failure = { error, at: performance.now() }
        this.opts.log.error('chromium is unavailable', { error: error.message })
        throw error
      },
    )
    this.launching = launching
    void launching
      .finally(() => {
        if (this.launching === launching) this.launching = null
      })
      .catch(() => {})
    return launching
  }
}
