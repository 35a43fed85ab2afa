import type { Logger } from '../../log'
import { FetchError } from '../errors'
import type { FetchResult, Redirect } from '../types'
import type { CdpEvent } from './cdp'
import { netError } from './net-errors'
import type { BrowserSession, Continuation, Paused } from './session'
import { mimeEssence } from '../../parse/document'
import { MAX_REFRESH_DELAY_S, REDIRECT_TYPE } from '../redirects'
import { type BrowserFetch, type Credentials, credentialsOf, prepare, withCredentials } from './page-request'
import { BodyReader, type FinalResponse, RENDERED_TYPES, WireHeaders } from './page-response'
import { headerValue, sameDocument, splitHeaders, toCookie } from './shapes'

export type PageOptions = { maxBodyBytes: number; log: Logger }

const IDLE_MS = 500
const SAME_DOCUMENT = new Set(['sameDocument', 'historySameDocument'])

/**
 * One fetch in its own browser context and page: set up, navigate, wait, read, and dispose of
 * both whatever happens. Main-frame documents reach it from the session's interceptor (`hooks`),
 * page events from its own flattened session.
 */
export class PageFetch {
  private readonly started = performance.now()
  /** Credentials from the request headers: added per request, to the first URL's origin only. */
  private readonly credentials: Credentials
  private readonly body: BodyReader
  private readonly redirects: Redirect[] = []
  private readonly inflight = new Set<string>()
  private readonly unsubscribe: (() => void)[] = []
  private contextId: string | null = null
  private targetId = ''
  private sessionId = ''
  private disposed = false
  /** The page has settled (or failed): later navigations are refused. */
  private finished = false
  /** The fetch has returned. */
  private over = false
  private settle!: { resolve: () => void; reject: (e: Error) => void }
  private readonly settled = new Promise<void>((resolve, reject) => (this.settle = { resolve, reject }))

  /** Network ids of main-frame documents seen at the request stage, the first one first. */
  private readonly documents: string[] = []
  private response: FinalResponse | null = null
  private raw: Uint8Array | null = null
  private mainBytes = 0
  private readonly wireHeaders = new WireHeaders()
  private frameMime: string | null = null
  /** The id (loader = network id) of a main-frame document on its way, until its response arrives. */
  private expecting: string | null = null
  /** The load state of the current document, put back when the one on its way is aborted. */
  private before = { loaded: false, loadSeen: false }
  /** The current document fired load (lifecycle, matched by loader id) … */
  private loadSeen = false
  /** … and the frame stopped loading after it, by when a refresh it asks for has been scheduled. */
  private loaded = false
  private scheduled = false
  private lastFailure: FetchError | null = null
  /** The latest main-frame document request that passed the interceptor, and when: the proxy may still have refused it. */
  private lastDocument: { url: string; at: number } | null = null
  private idleTimer: ReturnType<typeof setTimeout> | null = null

  constructor(
    private readonly session: BrowserSession,
    private readonly req: BrowserFetch,
    private readonly opts: PageOptions,
  ) {
    this.settled.catch(() => {})
    this.credentials = credentialsOf(req)
    this.body = new BodyReader(
      (method, params, onPage) => this.send(method, params, onPage),
      opts.maxBodyBytes,
      (what) => this.tooLarge(what),
    )
  }

  async run(signal: AbortSignal): Promise<FetchResult> {
    // Aborts and a dead browser end the fetch in any phase, reading the page included.
    let fatal!: (err: Error) => void
    const interrupted = new Promise<never>((_, reject) => (fatal = reject))
    const stop = (err: FetchError) => {
      this.finish(err)
      fatal(err)
    }
    const onAbort = () => stop(new FetchError('timeout', `the page did not finish loading within ${Math.round(performance.now() - this.started)} ms (${this.req.url})`, true))
    if (signal.aborted) onAbort()
    signal.addEventListener('abort', onAbort, { once: true })
    this.unsubscribe.push(
      () => signal.removeEventListener('abort', onAbort),
      this.session.cdp.onClose(() => stop(new FetchError('browser_unavailable', `Chromium exited while loading ${this.req.url}`, true))),
    )
    try {
      return await Promise.race([this.work(), interrupted])
    } catch (err) {
      if (err instanceof FetchError) throw err
      // A protocol command that failed: the browser could not do what the fetch needed.
      throw new FetchError('browser_unavailable', `Chromium failed loading ${this.req.url}: ${(err as Error).message}`, true)
    } finally {
      this.over = true
      await this.dispose()
    }
  }

  private send<T = any>(method: string, params: Record<string, unknown> = {}, onPage = true): Promise<T> {
    return this.session.cdp.send<T>(method, params, onPage ? this.sessionId : undefined)
  }

  private async work(): Promise<FetchResult> {
    const { req, session } = this
    const page = await session.openPage(req.proxy ? new URL(req.proxy) : null)
    if (this.disposed) {
      void session.disposeContext(page.contextId)
      throw new Error('the fetch ended before its page opened')
    }
    this.contextId = page.contextId
    this.targetId = page.targetId
    this.sessionId = page.sessionId
    session.pages.set(page.targetId, {
      request: (p) => this.onDocumentRequest(p),
      subrequest: (p) => withCredentials(p, this.credentials),
      refused: (err) => this.finish(err),
      response: (p) => this.onDocumentResponse(p),
    })
    this.unsubscribe.push(session.cdp.on(page.sessionId, (e) => this.onEvent(e)))
    await prepare((method, params, onPage) => this.send(method, params, onPage), req, page.contextId, this.opts.log)
    const nav = await this.send<{ errorText?: string }>('Page.navigate', { url: req.url })
    if (nav.errorText) this.onMainFailure(nav.errorText)
    await this.settled
    const body = this.raw ?? (await this.body.rendered(req.url, this.response?.networkId, this.frameMime))
    const cookies = await this.send<{ cookies: Parameters<typeof toCookie>[0][] }>('Storage.getCookies', { browserContextId: page.contextId }, false)
    const final = this.response!
    return {
      url: req.url,
      final_url: final.url,
      status: final.status,
      headers: final.headers,
      cookies: cookies.cookies.map(toCookie),
      content_type: final.contentType,
      body,
      redirects: this.redirects,
      timing: { total_ms: Math.round(performance.now() - this.started) },
    }
  }

  private onDocumentRequest(p: Paused): Continuation | FetchError {
    if (this.finished || this.over) return new FetchError('connect', 'the page has already settled')
    this.lastDocument = { url: p.request.url, at: performance.now() }
    if (p.redirectedRequestId) return withCredentials(p, this.credentials) // a server hop, counted at its response
    const id = p.networkId ?? p.requestId
    // The same request again (an HTTPS upgrade falling back to http, a restart): no new hop.
    const again = this.documents.includes(id)
    if (!again) this.documents.push(id)
    const first = this.documents[0] === id
    if (!first && !again) {
      const from = this.response?.url ?? this.req.url
      // Neither is followed by the standard client either; the current document stays the answer.
      if (sameDocument(from, p.request.url)) return new FetchError('connect', 'a reload is not a redirect')
      if (this.req.maxRedirects === 0) return new FetchError('connect', 'redirects are not followed')
      this.redirects.push({ url: from, location: p.request.url, side: 'client', type: 'temporary' })
      if (this.overLimit()) return this.lastFailure!
    }
    this.expectDocument(id)
    const { method, body } = this.req
    const credentials = withCredentials(p, this.credentials)
    if (!first || (method === 'GET' && !body)) return credentials
    return { ...credentials, method, ...(body && { postData: Buffer.from(body).toString('base64') }) }
  }

  private async onDocumentResponse(p: Paused): Promise<void> {
    if (this.finished || this.over) return this.session.fail(p.requestId, 'Aborted')
    // Network errors surface as loadingFailed on the page.
    if (p.responseErrorReason !== undefined) return this.session.continue(p.requestId, {})
    const status = p.responseStatusCode!
    const seen = splitHeaders(p.responseHeaders)
    const headers = this.wireHeaders.take(p.networkId, status, seen) ?? seen
    const location = headerValue(headers, 'location')
    const type = REDIRECT_TYPE[status]
    const target = location !== undefined && type ? URL.parse(location, p.request.url) : null
    const follows = target !== null && (target.protocol === 'http:' || target.protocol === 'https:') && this.req.maxRedirects > 0
    if (follows) {
      this.redirects.push({ url: p.request.url, location: target.href, side: 'server', type })
      if (this.overLimit()) return this.session.fail(p.requestId, 'Aborted')
      return this.session.continue(p.requestId, {})
    }
    const contentType = headerValue(headers, 'content-type') ?? null
    const mime = contentType ? mimeEssence(contentType) : ''
    const attachment = /^\s*attachment/i.test(headerValue(headers, 'content-disposition') ?? '')
    const empty = p.request.method === 'HEAD' || status === 204 || status === 205 || status === 304
    // No Content-Type: Chromium sniffs and renders; anything else that is not HTML comes back raw,
    // and so does a redirect not followed (max_redirects 0: the 3xx is the answer).
    const renders = !target && !empty && !attachment && (mime === '' || RENDERED_TYPES.has(mime))
    this.response = { url: p.request.url, status, headers, contentType, networkId: p.networkId }
    this.expecting = null
    this.mainBytes = 0
    const length = Number(headerValue(headers, 'content-length'))
    if (length > this.opts.maxBodyBytes) {
      this.finish(this.tooLarge(`declares ${length} bytes`))
      return this.session.fail(p.requestId, 'Aborted')
    }
    if (renders) return this.session.continue(p.requestId, {})
    try {
      this.raw = empty ? new Uint8Array(0) : await this.body.sent(p.requestId)
    } catch (err) {
      if (err instanceof FetchError) this.finish(err)
      // Chromium keeps no body for a redirect response.
      else if (target) this.raw = new Uint8Array(0)
      else this.finish(new FetchError('connect', `reading the response of ${p.request.url} failed: ${(err as Error).message}`, true))
    }
    // The bytes are in hand; showing them in the page (or downloading them) would only cost time.
    this.session.fail(p.requestId, 'Aborted')
    this.check()
  }

  private tooLarge(what: string) {
    return new FetchError('too_large', `${this.response?.url ?? this.req.url} ${what}, over the ${this.opts.maxBodyBytes} byte limit`)
  }

  private overLimit(): boolean {
    if (this.redirects.length <= this.req.maxRedirects) return false
    this.lastFailure = new FetchError('redirect_limit', `more than ${this.req.maxRedirects} redirects starting at ${this.req.url}`)
    this.finish(this.lastFailure)
    return true
  }

  private onEvent({ method, params }: CdpEvent) {
    const main = params.frameId === this.targetId
    switch (method) {
      case 'Page.lifecycleEvent':
        if (main && params.name === 'load' && params.loaderId === this.response?.networkId) this.loadSeen = true
        break
      case 'Page.frameStoppedLoading':
        if (main && this.loadSeen) this.loaded = true
        break
      case 'Page.frameStartedNavigating':
        if (main && !this.finished && !SAME_DOCUMENT.has(params.navigationType)) this.expectDocument(params.loaderId)
        break
      case 'Page.frameNavigated':
        if (params.frame?.id === this.targetId) this.frameMime = params.frame.mimeType ?? null
        break
      case 'Page.frameScheduledNavigation':
        if (main) this.onScheduled(params.url, params.delay)
        break
      case 'Page.frameClearedScheduledNavigation':
        if (main) this.scheduled = false
        break
      case 'Network.responseReceivedExtraInfo':
        // Usually ahead of the interceptor's pause; when behind, it still improves the answer.
        if (params.requestId === this.expecting || params.requestId === this.response?.networkId) this.wireHeaders.received(params, this.response, !!this.expecting)
        break
      case 'Network.requestWillBeSent':
        this.inflight.add(params.requestId)
        break
      case 'Network.dataReceived':
        if (params.requestId === this.response?.networkId && (this.mainBytes += params.dataLength) > this.opts.maxBodyBytes)
          this.finish(this.tooLarge(`sent more than ${this.opts.maxBodyBytes} bytes`))
        break
      case 'Network.loadingFinished':
        this.inflight.delete(params.requestId)
        break
      case 'Network.loadingFailed':
        this.inflight.delete(params.requestId)
        if (params.requestId === this.expecting || params.requestId === this.response?.networkId) this.onMainFailure(params.errorText)
        break
      case 'Inspector.targetCrashed':
        this.finish(new FetchError('connect', `the page crashed while loading ${this.req.url}`, true))
        break
      default:
        return
    }
    this.check()
  }

  /**
   * A new main-frame document is on its way. Announced twice: by the page (frameStartedNavigating,
   * which can come before the pause of its request, and even before the scheduled navigation is
   * cleared) and by the interceptor.
   */
  private expectDocument(id: string) {
    if (this.expecting === id) return
    if (!this.expecting) this.before = { loaded: this.loaded, loadSeen: this.loadSeen }
    this.expecting = id
    this.loaded = this.loadSeen = false
    // This navigation replaces any the document had scheduled (Chromium does not always say so).
    this.scheduled = false
    this.clearIdle()
  }

  /** A refresh or script-scheduled navigation of the main frame: a client redirect to wait for. */
  private onScheduled(url: string, delay: number) {
    const current = this.response?.url ?? this.req.url
    if (this.finished || this.req.maxRedirects === 0 || delay > MAX_REFRESH_DELAY_S || sameDocument(url, current)) return
    this.scheduled = true
    // No sitting out the timer: the target is known now.
    if (delay > 0) this.send('Page.navigate', { url, referrer: current }).catch(() => {})
  }

  private onMainFailure(errorText: string) {
    if (this.finished || this.raw) return
    if (/ERR_ABORTED/.test(errorText)) {
      // Replaced by a newer navigation (which arrives as its own document), or stopped: the
      // document already shown, if any, is the answer.
      if (!this.expecting) return
      this.expecting = null
      ;({ loaded: this.loaded, loadSeen: this.loadSeen } = this.before)
      if (this.response) return
    }
    this.lastFailure = this.proxyFailure() ?? netError(errorText, this.req.url)
    this.finish(this.lastFailure)
  }

  /**
   * Why the guarding proxy did not connect the document, when it did not: the browser reports
   * only that the tunnel or the connection failed; the proxy knows whether the guard refused the
   * address (a DNS answer that changed after the interceptor's check), the name did not resolve,
   * or the server did not answer.
   */
  private proxyFailure(): FetchError | null {
    const doc = this.lastDocument
    const failure = doc && this.session.proxies.failureFor(doc.url, doc.at)
    if (!failure) return null
    return failure.error ?? netError(`net::${failure.net}`, this.req.url)
  }

  private check() {
    if (this.finished) return
    if (this.raw) return this.finish()
    if (!this.loaded || this.scheduled || this.expecting) return this.clearIdle()
    if (!this.response) return this.finish(this.lastFailure ?? new FetchError('connect', `the navigation to ${this.req.url} was aborted`))
    if (this.req.waitUntil === 'load') return this.finish()
    if (this.inflight.size) return this.clearIdle()
    this.idleTimer ??= setTimeout(() => {
      this.idleTimer = null
      if (this.loaded && !this.scheduled && !this.expecting && !this.inflight.size) this.finish()
    }, IDLE_MS)
  }

  private clearIdle() {
    if (this.idleTimer) clearTimeout(this.idleTimer)
    this.idleTimer = null
  }

  private finish(err?: Error) {
    if (this.finished) return
    this.finished = true
    this.clearIdle()
    if (err) this.settle.reject(err)
    else this.settle.resolve()
  }

  private async dispose() {
    if (this.disposed) return
    this.disposed = true
    this.clearIdle()
    for (const u of this.unsubscribe) u()
    if (this.targetId) this.session.pages.delete(this.targetId)
    if (this.contextId) await this.session.disposeContext(this.contextId)
    this.session.replenish()
  }
}
