/**
 * A Chrome DevTools protocol connection over Bun's built-in WebSocket, with flattened sessions:
 * one socket carries the browser's own messages (no sessionId) and every attached page's.
 */

type Json = Record<string, unknown>
export type CdpEvent = { method: string; params: any }
type Pending = { resolve: (v: any) => void; reject: (e: Error) => void; method: string }

/** The browser answered a command with an error (a protocol failure, not a network one). */
export class CdpError extends Error {
  constructor(
    readonly method: string,
    readonly code: number,
    message: string,
  ) {
    super(`${method}: ${message}`)
  }
}

/** The socket closed (Chromium exited or was killed) while a command waited. */
export class CdpClosedError extends Error {}

export class Cdp {
  private nextId = 1
  private readonly pending = new Map<number, Pending>()
  private readonly listeners = new Map<string, Set<(e: CdpEvent) => void>>()
  private readonly closeListeners = new Set<() => void>()
  private closedWith: string | null = null

  private constructor(private readonly ws: WebSocket) {
    ws.binaryType = 'arraybuffer'
    ws.addEventListener('message', (ev) => this.dispatch(ev.data))
    ws.addEventListener('close', (ev) => this.shut(`the DevTools connection closed (${ev.code}${ev.reason ? ` ${ev.reason}` : ''})`))
    ws.addEventListener('error', () => this.shut('the DevTools connection failed'))
  }

  static connect(url: string, timeoutMs: number): Promise<Cdp> {
    return new Promise((resolve, reject) => {
      const ws = new WebSocket(url)
      const timer = setTimeout(() => {
        ws.close()
        reject(new Error(`no DevTools connection to ${url} within ${timeoutMs} ms`))
      }, timeoutMs)
      ws.addEventListener('open', () => {
        clearTimeout(timer)
        resolve(new Cdp(ws))
      })
      ws.addEventListener('error', () => {
        clearTimeout(timer)
        reject(new Error(`could not connect to DevTools at ${url}`))
      })
    })
  }

  /** Why the connection closed, once it has. */
  get closeReason(): string | null {
    return this.closedWith
  }

  get closed(): boolean {
    return this.closedWith !== null
  }

  send<T = any>(method: string, params: Json = {}, sessionId?: string): Promise<T> {
    if (this.closedWith !== null) return Promise.reject(new CdpClosedError(`${method}: ${this.closedWith}`))
    const id = this.nextId++
    return new Promise<T>((resolve, reject) => {
      this.pending.set(id, { resolve, reject, method })
      this.ws.send(JSON.stringify(sessionId ? { id, method, params, sessionId } : { id, method, params }))
    })
  }

  /** Subscribes to the events of one session ('' for the browser's own); returns the unsubscriber. */
  on(sessionId: string, listener: (e: CdpEvent) => void): () => void {
    let set = this.listeners.get(sessionId)
    if (!set) this.listeners.set(sessionId, (set = new Set()))
    set.add(listener)
    return () => {
      set.delete(listener)
      if (!set.size && this.listeners.get(sessionId) === set) this.listeners.delete(sessionId)
    }
  }

  onClose(listener: () => void): () => void {
    if (this.closedWith !== null) queueMicrotask(listener)
    else this.closeListeners.add(listener)
    return () => this.closeListeners.delete(listener)
  }

  close(): void {
    this.shut('the DevTools connection was closed')
    try {
      this.ws.close()
    } catch {
      // already closing
    }
  }

  private dispatch(data: unknown) {
    const text = typeof data === 'string' ? data : new TextDecoder().decode(data as ArrayBuffer)
    let msg: { id?: number; method?: string; params?: any; result?: any; error?: { code: number; message: string }; sessionId?: string }
    try {
      msg = JSON.parse(text)
    } catch {
      return
    }
    if (typeof msg.id === 'number') {
      const p = this.pending.get(msg.id)
      if (!p) return
      this.pending.delete(msg.id)
      if (msg.error) p.reject(new CdpError(p.method, msg.error.code, msg.error.message))
      else p.resolve(msg.result ?? {})
      return
    }
    if (!msg.method) return
    const set = this.listeners.get(msg.sessionId ?? '')
    if (!set) return
    const ev = { method: msg.method, params: msg.params ?? {} }
    // A listener that throws must not starve the others or kill the socket handler.
    for (const l of [...set]) {
      try {
        l(ev)
      } catch {
        // the listener owns its errors
      }
    }
  }

  private shut(why: string) {
    if (this.closedWith !== null) return
    this.closedWith = why
    for (const p of this.pending.values()) p.reject(new CdpClosedError(`${p.method}: ${why}`))
    this.pending.clear()
    for (const l of this.closeListeners) l()
    this.closeListeners.clear()
    this.listeners.clear()
  }
}
