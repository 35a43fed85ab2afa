/** A small JSON client for tests, over real HTTP (fetch) or in process (app.handle). */

export type Reply = { status: number; body: any; text: string; headers: Headers }
export type CallOptions = { body?: unknown; raw?: string; tenant?: string | null; headers?: Record<string, string> }

/**
 * Calls `send` with requests to `base`; sends X-Tenant-Id (default `acme`, null for none).
 * `body` is sent as JSON with a JSON content type; `raw` is sent as it is.
 */
export function jsonClient(base: string, send: (request: Request) => Promise<Response>) {
  async function call(method: string, path: string, opts: CallOptions = {}): Promise<Reply> {
    const headers = new Headers(opts.headers)
    if (opts.tenant !== null) headers.set('x-tenant-id', opts.tenant ?? 'acme')
    const body = opts.raw ?? (opts.body === undefined ? undefined : JSON.stringify(opts.body))
    if (body !== undefined && opts.raw === undefined && !headers.has('content-type')) headers.set('content-type', 'application/json')
    const res = await send(new Request(`${base}${path}`, { method, headers, body }))
    const text = await res.text()
    let parsed: unknown = text
    if (res.headers.get('content-type')?.includes('json') && text !== '') {
      try {
        parsed = JSON.parse(text)
      } catch {
        throw new Error(`${method} ${path}: answered ${res.status} with a JSON content type but this body: ${text.slice(0, 500)}`)
      }
    }
    return { status: res.status, body: parsed, text, headers: res.headers }
  }
  return {
    call,
    get: (path: string, opts?: CallOptions) => call('GET', path, opts),
    post: (path: string, body?: unknown, opts?: CallOptions) => call('POST', path, { ...opts, body }),
    put: (path: string, body?: unknown, opts?: CallOptions) => call('PUT', path, { ...opts, body }),
    patch: (path: string, body?: unknown, opts?: CallOptions) => call('PATCH', path, { ...opts, body }),
    del: (path: string, opts?: CallOptions) => call('DELETE', path, opts),
  }
}
