import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { loadConfig, type Config } from '../../src/config'
import { createLogger } from '../../src/log'
import { managementApp } from '../../src/server'
import { createStore } from '../../src/store'
import { openDatabase } from '../../src/store/db'

export type Reply = { status: number; body: any; headers: Headers }
export type CallOptions = { body?: unknown; raw?: string; tenant?: string | null; headers?: Record<string, string> }

/**
 * A management API over a fresh temp data dir, driven with app.handle (real routing, real
 * SQLite, no sockets). `env` sets TRAWL_* settings as the server would read them.
 */
export function testApi(env: Record<string, string> = {}, overrides: Partial<Config> = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'trawl-test-'))
  const config = { ...loadConfig(['--data-dir', dir], env).config, ...overrides }
  const db = openDatabase(dir)
  const store = createStore(db)
  const logs: string[] = []
  const app = managementApp({ store, config, log: createLogger('info', (line) => logs.push(line)) })

  async function call(method: string, path: string, opts: CallOptions = {}): Promise<Reply> {
    const headers = new Headers(opts.headers)
    if (opts.tenant !== null) headers.set('x-tenant-id', opts.tenant ?? 'acme')
    let body: string | undefined
    if (opts.raw !== undefined) body = opts.raw
    else if (opts.body !== undefined) body = JSON.stringify(opts.body)
    if (body !== undefined && !headers.has('content-type')) headers.set('content-type', 'application/json')
    const res = await app.handle(new Request(`http://trawl.test${path}`, { method, headers, body }))
    const text = await res.text()
    let parsed: unknown = text
    if (res.headers.get('content-type')?.includes('json')) parsed = text ? JSON.parse(text) : null
    return { status: res.status, body: parsed, headers: res.headers }
  }

  return {
    call,
    get: (path: string, opts?: CallOptions) => call('GET', path, opts),
    post: (path: string, body?: unknown, opts?: CallOptions) => call('POST', path, { ...opts, body }),
    put: (path: string, body?: unknown, opts?: CallOptions) => call('PUT', path, { ...opts, body }),
    del: (path: string, opts?: CallOptions) => call('DELETE', path, opts),
    app,
    store,
    db,
    logs,
    config,
    dir,
    close() {
      db.close()
      rmSync(dir, { recursive: true, force: true })
    },
  }
}
export type TestApi = ReturnType<typeof testApi>

/** Counts rows of every table, to show a rejected request changed nothing. */
export function snapshot(api: TestApi): { hosts: number; links: number; labels: number; jobs: number; runs: number } {
  const tables = ['hosts', 'links', 'labels', 'jobs', 'runs']
  return Object.fromEntries(tables.map((t) => [t, (api.db.query(`SELECT count(*) AS n FROM ${t}`).get() as { n: number }).n])) as ReturnType<typeof snapshot>
}

/** Query string from pairs, keeping repeated keys and brackets (`labels[env]`). */
export function qs(pairs: [string, string | number | boolean][]): string {
  const p = new URLSearchParams()
  for (const [k, v] of pairs) p.append(k, String(v))
  const s = p.toString()
  return s ? `?${s}` : ''
}

export const job = (over: Record<string, unknown> = {}) => ({ name: 'docs', config: { seeds: ['https://example.com/'] }, ...over })
