import type { Logger } from '../../log'
import { fetchableScheme, type Lookup } from '../address-guard'
import { FetchError } from '../errors'
import { Cdp, type CdpEvent } from './cdp'
import { GuardProxies } from './guard-proxy'
import { type ChromiumProcess, launchChromium } from './process'
import { within } from './waiting'

/** A Fetch.requestPaused event (request or response stage). */
export type Paused = {
  requestId: string
  request: { url: string; method: string; headers?: Record<string, string> }
  frameId: string
  resourceType: string
  networkId?: string
  redirectedRequestId?: string
  responseStatusCode?: number
  responseErrorReason?: string
  responseHeaders?: { name: string; value: string }[]
}

export type Continuation = { method?: string; postData?: string; headers?: { name: string; value: string }[] }

export type SessionOptions = {
  /** A path, or a command name looked up on PATH. */
  command: string
  allowPrivate: boolean
  maxBodyBytes: number
  log: Logger
  /** How the guard resolves names (tests answer for names of their own). The system resolver. */
  lookup?: Lookup
}

/** A page in its own fresh browser context, attached (flattened) with Page and Network enabled. */
export type OpenPage = { contextId: string; targetId: string; sessionId: string }

const VIEWPORT = { width: 1280, height: 800 }

/** What one page fetch decides about its own main-frame documents. */
export type DocumentHooks = {
  /** A main-frame document request that passed the guard: how to continue it, or why not. */
  request(p: Paused): Continuation | FetchError
  /** Any other request of the main frame that passed the guard. */
  subrequest(p: Paused): Continuation
  /** The guard refused a main-frame document request. */
  refused(err: FetchError): void
  /** A main-frame document response; the hook continues or fails the request itself. */
  response(p: Paused): Promise<void>
}

/**
 * One running Chromium: its process, its DevTools connection, its guarding proxy and the
 * request interceptor.
 *
 * The address guard holds at the network level: every connection the browser makes goes
 * through the proxy (guard-proxy.ts), which resolves, checks and connects to the checked
 * address, so nothing a page does (pre-connects, iframes, WebSockets, workers, a DNS answer that
 * changes between check and connect) reaches an address the guard refused. The interceptor sits
 * in front of it at the browser target, so requests of out-of-process frames, popups and workers
 * pause there too: it refuses what the guard would refuse before a connection is even asked for
 * (a page's script then sees a failed request, and a refused document its own clear error), and
 * it fails any request whose handling throws.
 */
export class BrowserSession {
  /** Page fetches by target id, which is also their main frame's id. */
  readonly pages = new Map<string, DocumentHooks>()
  private readonly authAnswered = new Set<string>()
  private closing = false
  /** One page opened ahead for the next fetch without a proxy: opening one costs 250-350 ms. */
  private spare: Promise<OpenPage | null> | null = null

  private constructor(
    readonly process: ChromiumProcess,
    readonly cdp: Cdp,
    /** The listeners every connection of this browser goes through. */
    readonly proxies: GuardProxies,
    private readonly allowPrivate: boolean,
    private readonly maxBodyBytes: number,
    private readonly log: Logger,
  ) {}

  static async start({ command, allowPrivate, maxBodyBytes, log, lookup }: SessionOptions): Promise<BrowserSession> {
    const proxies = new GuardProxies({ allowPrivate, log, lookup })
    let proc: ChromiumProcess
    try {
      proc = await launchChromium(command, log, { proxy: await proxies.url(null) })
    } catch (err) {
      await proxies.close()
      throw err
    }
    const abandon = async () => {
      proc.kill()
      await Promise.all([proc.exited, proxies.close()])
    }
    let cdp: Cdp
    try {
      cdp = await Cdp.connect(proc.wsUrl, 10_000)
    } catch (err) {
      await abandon()
      throw new FetchError('browser_unavailable', `Chromium at "${command}" started but its DevTools endpoint failed: ${(err as Error).message}; set TRAWL_CHROMIUM to a working Chromium`)
    }
    const session = new BrowserSession(proc, cdp, proxies, allowPrivate, maxBodyBytes, log)
    void proc.exited.then(() => {
      cdp.close()
      return proxies.close()
    })
    // A browser we cannot talk to any more is useless: make sure it is gone too.
    cdp.onClose(() => {
      if (session.closing) return
      if (proc.alive()) log.warn('the DevTools connection to chromium closed; stopping it', { pid: proc.pid, why: cdp.closeReason })
      proc.kill()
    })
    cdp.on('', (e) => session.onEvent(e))
    try {
      await cdp.send('Fetch.enable', {
        handleAuthRequests: true,
        patterns: [
          { urlPattern: '*', requestStage: 'Request' },
          { urlPattern: '*', resourceType: 'Document', requestStage: 'Response' },
        ],
      })
    } catch (err) {
      await abandon()
      throw new FetchError('browser_unavailable', `Chromium at "${command}" refused request interception: ${(err as Error).message}; set TRAWL_CHROMIUM to a working Chromium`)
    }
    return session
  }

  get alive(): boolean {
    return this.process.alive() && !this.cdp.closed
  }

  /**
   * A fresh context and page for one fetch. A proxy belongs to the context, so only proxy-less
   * fetches can take the spare.
   */
  async openPage(proxy: URL | null): Promise<OpenPage> {
    if (proxy) return this.prepare(proxy)
    const spare = this.spare
    this.spare = null
    return (spare && (await spare)) ?? this.prepare(null)
  }

  /**
   * Opens the spare page, once a fetch is over: opened while a page loads, it competes with that
   * page for the browser's UI thread and slows it down by about as much as it saves.
   */
  replenish() {
    if (this.spare || !this.alive || this.closing) return
    this.spare = this.prepare(null).catch(() => null)
  }

  async disposeContext(contextId: string): Promise<void> {
    if (this.cdp.closed) return
    // Disposing of the context closes its page; a hung renderer must not hold a slot for long.
    await within(
      this.cdp.send('Target.disposeBrowserContext', { browserContextId: contextId }).catch(() => {}),
      5000,
    )
  }

  private async prepare(proxy: URL | null): Promise<OpenPage> {
    const { cdp } = this
    const { browserContextId: contextId } = await cdp.send('Target.createBrowserContext', {
      disposeOnDetach: true,
      // The guarding proxy's listener for this fetch's route (direct, or on through its named
      // proxy); Chromium never proxies loopback unless `<-loopback>` says so.
      proxyServer: await this.proxies.url(proxy?.href ?? null),
      proxyBypassList: '<-loopback>',
    })
    try {
      await cdp.send('Browser.setDownloadBehavior', { behavior: 'deny', browserContextId: contextId })
      const { targetId } = await cdp.send('Target.createTarget', { url: 'about:blank', browserContextId: contextId, ...VIEWPORT })
      const { sessionId } = await cdp.send('Target.attachToTarget', { targetId, flatten: true })
      const buffer = (n: number) => Math.min(n, 2 ** 31 - 1)
      await Promise.all([
        cdp.send('Page.enable', {}, sessionId),
        cdp.send('Network.enable', { maxResourceBufferSize: buffer(this.maxBodyBytes + 1), maxTotalBufferSize: buffer(this.maxBodyBytes * 2 + 1) }, sessionId),
        cdp.send('Inspector.enable', {}, sessionId),
        cdp.send('Page.setLifecycleEventsEnabled', { enabled: true }, sessionId),
      ])
      return { contextId, targetId, sessionId }
    } catch (err) {
      void this.disposeContext(contextId)
      throw err
    }
  }

  /**
   * Asks Chromium to quit, so it reaps its own helpers (killed outright they are orphans, and
   * under an init that does not reap they stay zombies), then kills whatever is left.
   */
  async close(): Promise<void> {
    this.closing = true
    if (this.alive) await within(Promise.all([this.cdp.send('Browser.close').catch(() => {}), this.process.exited]), 2000)
    this.cdp.close()
    this.process.kill()
    await Promise.all([this.process.exited, this.proxies.close()])
  }

  private onEvent(e: CdpEvent) {
    if (e.method === 'Fetch.requestPaused') {
      this.paused(e.params as Paused).catch((err) => {
        // Fail closed: a request whose check did not finish is never sent.
        this.log.debug('browser request interception failed', { url: e.params.request?.url, error: String(err) })
        this.fail(e.params.requestId, 'Aborted')
      })
    } else if (e.method === 'Fetch.authRequired') this.auth(e.params)
  }

  private async paused(p: Paused): Promise<void> {
    const page = this.pages.get(p.frameId)
    const document = p.resourceType === 'Document'
    if (p.responseStatusCode !== undefined || p.responseErrorReason !== undefined) {
      if (page && document) return page.response(p)
      return this.continue(p.requestId, {})
    }
    let url: URL
    try {
      url = new URL(p.request.url)
    } catch {
      return this.fail(p.requestId, 'AccessDenied')
    }
    if (url.protocol === 'data:' || url.protocol === 'blob:') return this.continue(p.requestId, {})
    // Chromium's own favicon fetch: one more request per page to the target, for nothing.
    if (p.resourceType === 'Other' && url.pathname === '/favicon.ico') return this.fail(p.requestId, 'BlockedByClient')
    if (!fetchableScheme(url)) {
      if (document) page?.refused(new FetchError('blocked_address', `${url.protocol} URLs are not fetched (${p.request.url.slice(0, 200)})`))
      return this.fail(p.requestId, 'AccessDenied')
    }
    // With private networks allowed the check could only fail on DNS, which Chromium reports itself.
    if (!this.allowPrivate) {
      try {
        await this.proxies.check(url.hostname)
      } catch (err) {
        const refusal = err instanceof FetchError ? err : new FetchError('dns', `${url.hostname} could not be resolved`)
        if (document) page?.refused(refusal)
        return this.fail(p.requestId, refusal.code === 'dns' ? 'NameNotResolved' : 'AccessDenied')
      }
    }
    if (!page) return this.continue(p.requestId, {})
    if (!document) return this.continue(p.requestId, page.subrequest(p))
    const decision = page.request(p)
    if (decision instanceof FetchError) return this.fail(p.requestId, 'Aborted')
    return this.continue(p.requestId, decision)
  }

  private auth(params: { requestId: string; authChallenge: { source?: string; origin: string } }) {
    const { requestId, authChallenge } = params
    // Only the guarding proxy is answered: named proxies get their credentials from it, and a
    // site asking for credentials gets none.
    const creds = authChallenge.source === 'Proxy' && this.proxies.isOwn(authChallenge.origin) ? { username: this.proxies.username, password: this.proxies.password } : undefined
    // Credentials go once per request: a proxy that rejects them would otherwise ask forever.
    const answer = creds && !this.authAnswered.has(requestId) ? { response: 'ProvideCredentials', ...creds } : { response: 'CancelAuth' }
    if (creds) this.authAnswered.add(requestId)
    if (this.authAnswered.size > 1000) this.authAnswered.clear()
    this.cdp.send('Fetch.continueWithAuth', { requestId, authChallengeResponse: answer }).catch(() => {})
  }

  continue(requestId: string, c: Continuation) {
    // The request may be gone already (its page closed); nothing is waiting on the answer.
    this.cdp.send('Fetch.continueRequest', { requestId, ...c }).catch(() => {})
  }

  fail(requestId: string, errorReason: 'AccessDenied' | 'NameNotResolved' | 'Aborted' | 'BlockedByClient') {
    this.cdp.send('Fetch.failRequest', { requestId, errorReason }).catch(() => {})
  }
}
