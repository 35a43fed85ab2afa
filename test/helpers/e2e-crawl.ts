/**
 * What the end-to-end crawl tests share: a fixture site that counts every request, and the
 * management API calls that create a run, wait for it and read what it recorded, against the
 * compiled binary (test/helpers/binary.ts starts it).
 */
import { expect } from 'bun:test'
import { Database } from 'bun:sqlite'
import { join } from 'node:path'
import type { http } from './binary'
import { waitFor as pollFor } from './wait'

// ------------------------------------------------------------------ the fixture site

export type Site = ReturnType<typeof crawlSite>

/**
 * A site of `n` pages /p/0 … /p/{n-1}: each links to its two children in a binary tree, to one
 * other page and back to /p/0, so every page is reachable and most are found several times.
 * Each page answers after `delayMs`. Every request is counted and time-stamped on arrival.
 */
export function crawlSite(n: number, delayMs: number) {
  const hits = new Map<string, number>()
  const arrivals: { path: string; at: number }[] = []
  let inFlight = 0
  const server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    async fetch(req) {
      const path = new URL(req.url).pathname
      hits.set(path, (hits.get(path) ?? 0) + 1)
      arrivals.push({ path, at: Date.now() })
      if (path === '/robots.txt') return new Response('User-agent: *\nAllow: /\n', { headers: { 'content-type': 'text/plain' } })
      const m = /^\/p\/(\d+)$/.exec(path)
      const i = m ? Number(m[1]) : NaN
      if (!(i >= 0 && i < n)) return new Response('not here', { status: 404 })
      inFlight++
      try {
        await Bun.sleep(delayMs)
      } finally {
        inFlight--
      }
      const links = [2 * i + 1, 2 * i + 2, (i * 7 + 3) % n, 0].filter((x) => x < n).map((x) => `<a href="/p/${x}">page ${x}</a>`)
      return new Response(`<!doctype html><html><head><title>page ${i}</title></head><body><h1>page ${i}</h1>${links.join(' ')}</body></html>`, {
        headers: { 'content-type': 'text/html; charset=utf-8' },
      })
    },
  })
  const origin = `http://127.0.0.1:${server.port}`
  return {
    server,
    origin,
    n,
    hits,
    arrivals,
    get inFlight() {
      return inFlight
    },
    url: (i: number) => `${origin}/p/${i}`,
    pages: () => Array.from({ length: n }, (_, i) => `${origin}/p/${i}`),
    /** Requests for pages (robots.txt aside). */
    pageHits: () => [...hits].filter(([p]) => p.startsWith('/p/')).reduce((s, [, c]) => s + c, 0),
  }
}

const sites: Site[] = []
/** A site of `n` pages, stopped by `stopSites()`. */
export function site(n: number, delayMs: number): Site {
  const s = crawlSite(n, delayMs)
  sites.push(s)
  return s
}

// ------------------------------------------------------------------ helpers

// A process's start, its crawl and its restart: longer waits, polled less often.
export const waitFor = <T>(what: string, probe: () => T | Promise<T>, timeoutMs = 15_000, everyMs = 50) => pollFor(what, probe, timeoutMs, everyMs)

export type Api = ReturnType<typeof http>

/** A job crawling `seed` with a run created at once; answers the run id. */
export async function createRun(api: Api, seed: string, config: Record<string, unknown> = {}, tenant?: string): Promise<string> {
  const r = await api.post('/v1/jobs?create_run=true', { name: 'e2e crawl', config: { seeds: [seed], ...config } }, tenant ? { tenant } : {})
  expect(r.status).toBe(201)
  return r.body.run.id as string
}

export const getRun = async (api: Api, id: string, tenant?: string) => {
  const r = await api.get(`/v1/runs/${id}`, tenant ? { tenant } : {})
  expect(r.status).toBe(200)
  return r.body
}

export const finished = (api: Api, id: string, timeoutMs = 30_000, tenant?: string) =>
  waitFor(
    `run ${id} to finish`,
    async () => {
      const run = await getRun(api, id, tenant)
      return run.status === 'finished' ? run : null
    },
    timeoutMs,
    100,
  )

/** Every visited link of a run, all pages. */
export async function visitedUrls(api: Api, id: string, tenant?: string): Promise<string[]> {
  const out: string[] = []
  let page: string | null = null
  for (;;) {
    const r = await api.get(`/v1/runs/${id}/links?per_page=100${page ? `&page=${encodeURIComponent(page)}` : ''}`, tenant ? { tenant } : {})
    expect(r.status).toBe(200)
    out.push(...r.body.data.map((l: { url: string }) => l.url))
    page = r.body.next_page
    if (!page) return out
  }
}

export const counts = (urls: string[]) => {
  const m = new Map<string, number>()
  for (const u of urls) m.set(u, (m.get(u) ?? 0) + 1)
  return m
}

/** Opens the data dir's database read-only (the server is down) to look at what it left. */
export function inspectDb<T>(dataDir: string, look: (db: Database) => T): T {
  const db = new Database(join(dataDir, 'trawl.db'), { readonly: true })
  try {
    return look(db)
  } finally {
    db.close()
  }
}

export const OPEN = { TRAWL_ALLOW_PRIVATE_NETWORKS: 'true' }
/** A whole-site crawl: deep enough for the tree, four fetches at once. */
export const WHOLE = (concurrency = 4) => ({ limits: { max_depth: 50, max_urls: 5000 }, politeness: { concurrency, per_host_concurrency: concurrency } })

/** Stops every site made by `site()`. */
export function stopSites() {
  for (const s of sites.splice(0)) s.server.stop(true)
}
