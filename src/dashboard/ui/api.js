// The public JSON API, with the tenant the user chose. Errors carry the API's body: a 422's
// `fields` are shown at the form field they name.
import { useEffect, useRef, useState } from './html.js'

const TENANT_KEY = 'trawl.tenant'
export const getTenant = () => localStorage.getItem(TENANT_KEY) || ''
export const setTenant = (t) => (t ? localStorage.setItem(TENANT_KEY, t) : localStorage.removeItem(TENANT_KEY))

export class ApiError extends Error {
  constructor(status, body) {
    super(body?.message || (body?.fields ? 'some fields are invalid' : `HTTP ${status}`))
    this.status = status
    this.body = body
  }
  /** field path → messages, for a 422. */
  get fields() {
    return Object.fromEntries((this.body?.fields || []).map((f) => [f.field, f.errors]))
  }
}

export async function call(method, path, body) {
  const headers = { 'x-tenant-id': getTenant() }
  if (body !== undefined) headers['content-type'] = 'application/json'
  const r = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) })
  if (r.status === 204) return null
  const data = await r.json().catch(() => null)
  if (!r.ok) throw new ApiError(r.status, data)
  return data
}
export const get = (path) => call('GET', path)
export const post = (path, body) => call('POST', path, body ?? {})
export const put = (path, body) => call('PUT', path, body)
export const patch = (path, body) => call('PATCH', path, body)
export const del = (path) => call('DELETE', path)
/** The catalogue's host of a domain, created when new (PUT /v1/hosts): what a pattern set or data map is made under. */
export const hostOf = async (domain) => (await put('/v1/hosts', { hosts: [domain] })).data[0]

/** A query string from pairs or an object; arrays are repeated keys, empty values left out. */
export function qs(params) {
  const u = new URLSearchParams()
  for (const [k, v] of Object.entries(params)) {
    for (const x of Array.isArray(v) ? v : [v]) if (x !== undefined && x !== null && x !== '') u.append(k, String(x))
  }
  const s = u.toString()
  return s ? `?${s}` : ''
}

/** The bytes of a GET (an export, an artifact) as text, with the tenant header. */
export async function text(path) {
  const r = await fetch(path, { headers: { 'x-tenant-id': getTenant() } })
  if (!r.ok) throw new ApiError(r.status, await r.json().catch(() => null))
  return r.text()
}

/** Saves a GET's answer as a file: a plain link cannot send the tenant header. */
export async function download(path, filename) {
  const r = await fetch(path, { headers: { 'x-tenant-id': getTenant() } })
  if (!r.ok) throw new ApiError(r.status, await r.json().catch(() => null))
  const url = URL.createObjectURL(await r.blob())
  const a = document.createElement('a')
  a.href = url
  a.download = filename
  document.body.append(a)
  a.click()
  a.remove()
  setTimeout(() => URL.revokeObjectURL(url), 1000)
}

/**
 * `load()`'s answer, again every `everyMs` when given (live views), and on `deps` changing.
 * Answers {data, error, reload}; a poll that fails keeps the last data and shows the error.
 */
export function useLoad(load, deps, everyMs) {
  const [state, setState] = useState({ data: null, error: null })
  const seq = useRef(0)
  const reload = async () => {
    const mine = ++seq.current
    try {
      const data = await load()
      if (mine === seq.current) setState({ data, error: null })
    } catch (error) {
      if (mine === seq.current) setState((s) => ({ data: s.data, error }))
    }
  }
  useEffect(() => {
    setState({ data: null, error: null })
    void reload()
    if (!everyMs) return () => seq.current++
    const timer = setInterval(reload, everyMs)
    return () => {
      clearInterval(timer)
      seq.current++
    }
  }, deps)
  return { ...state, reload }
}

/**
 * A paged list: the pages read so far, and `more()` for the next; `each(page)` sees what is shown.
 * Every load (a poll, a reload, `more()`) walks from the first page to as many pages as have been
 * asked for, so rows past the first page are as fresh as the first page's, and a row deleted or
 * moved on a later page does not linger there.
 */
export function usePaged(path, deps, everyMs, each = (page) => page) {
  const wanted = useRef(1)
  // Declared before useLoad, so it runs first: a new path starts again at one page.
  useEffect(() => {
    wanted.current = 1
  }, [path, ...deps])
  const sep = path.includes('?') ? '&' : '?'
  const walk = async () => {
    let page = await get(path)
    const data = [...page.data]
    for (let n = 1; n < wanted.current && page.next_page; n++) {
      page = await get(`${path}${sep}page=${encodeURIComponent(page.next_page)}`)
      data.push(...page.data)
    }
    return each({ data, next_page: page.next_page })
  }
  const list = useLoad(walk, [path, ...deps], everyMs)
  const more = () => {
    wanted.current++
    return list.reload()
  }
  return { rows: list.data?.data || [], next: list.data?.next_page ?? null, more, error: list.error, loaded: list.data !== null, reload: list.reload }
}

/** The query of the hash route (`#/runs?job=…`). */
export const hashParams = () => new URLSearchParams(location.hash.split('?')[1] || '')
