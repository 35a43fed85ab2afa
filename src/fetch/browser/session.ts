import type { Logger } from '../../log'
import { fetchableScheme, resolveChecked } from '../address-guard'
import { FetchError } from '../errors'
import { Cdp, type CdpEvent } from './cdp'
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
 * One running Chromium: its process, its DevTools connection and the address guard.
 *
 * The guard intercepts at the browser target, not per page, so requests of out-of-process
 * frames, popups and workers (service workers included) pass through it as well.
 *
 * Residual gaps, both closed only by sending all browser traffic through a guarding proxy of
 * our own (which would resolve, check, and connect to the checked address):
 * - DNS: the guard resolves the host itself, then Chromium resolves it again to connect. A DNS
 *   answer that changes between the two (rebinding with a short TTL) reaches an address the
 *   guard never saw. The standard client connects to the checked address; Chromium cannot be
 *   told to per request (--host-resolver-rules is per process).
 * - WebSockets: their handshakes never pause in the Fetch domain (measured with Chromium 156,
 *   and Network.setBlockedURLs does not stop them either), so a page can open ws:// to any
 *   address: a blind GET with attacker-chosen path to an internal HTTP server.
 */
export class BrowserSession {
  /** Page fetches by target id, which is also their main frame's id. */
  readonly pages = new Map<string, DocumentHooks>()
  private readonly proxyAuth = new Map<string, { username: string; password: string }>()
  private readonly authAnswered = new Set<string>()
  private closing = false
  /** One page opened ahead for the next fetch without a proxy: opening one costs 250-350 ms. */
  private spare: Promise<OpenPage | null> | null = null

  private constructor(
    readonly process: ChromiumProcess,
    readonly cdp: Cdp,
    private readonly allowPrivate: boolean,
    private readonly maxBodyBytes: number,
    private readonly log: Logger,
  ) {}

  static async start(command: string, allowPrivate: boolean, maxBodyBytes: number, log: Logger): Promise<BrowserSession> {
    const proc = await launchChromium(command, log)
    let cdp: Cdp
    try {
      cdp = await Cdp.connect(proc.wsUrl, 10_000)
    } catch (err) {
      proc.kill()
      await proc.exited
      throw new FetchError('browser_unavailable', `Chromium at "${command}" started but its DevTools endpoint failed: ${(err as Error).message}; set TRAWL_CHROMIUM to a working Chromium`)
    }
    const session = new BrowserSession(proc, cdp, allowPrivate, maxBodyBytes, log)
    void proc.exited.then(() => cdp.close())
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
      proc.kill()
      await proc.exited
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
    if (proxy) {
      this.setProxyCredentials(proxy)
      return this.prepare(proxy)
    }
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
    await within(this.cdp.send('Target.disposeBrowserContext', { browserContextId: contextId }).catch(() => {}), 5000)
  }

  private async prepare(proxy: URL | null): Promise<OpenPage> {
    const { cdp } = this
    const { browserContextId: contextId } = await cdp.send('Target.createBrowserContext', {
      disposeOnDetach: true,
      // Chromium never proxies loopback unless told to; tests and operators expect the proxy used.
      ...(proxy && { proxyServer: `${proxy.protocol}//${proxy.host}`, proxyBypassList: '<-loopback>' }),
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

  /** Credentials for a proxy, answered when that proxy asks (Chromium takes none in the proxy URL). */
  private setProxyCredentials(proxy: URL) {
    if (!proxy.username) return
    const creds = { username: decodeURIComponent(proxy.username), password: decodeURIComponent(proxy.password) }
    this.proxyAuth.set(proxy.host, creds)
    this.proxyAuth.set(proxy.origin, creds)
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
    await this.process.exited
  }

  private onEvent(e: CdpEvent) {
    if (e.method === 'Fetch.requestPaused') {
      this.paused(e.params as Paused).catch((err) => {
        this.log.debug('browser request interception failed', { url: e.params.request?.url, error: String(err) })
        this.continue(e.params.requestId, {})
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
        await resolveChecked(url.hostname, false)
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
    const creds = authChallenge.source === 'Proxy' ? (this.proxyAuth.get(authChallenge.origin) ?? this.proxyAuth.get(authChallenge.origin.replace(/^\w+:\/\//, ''))) : undefined
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
