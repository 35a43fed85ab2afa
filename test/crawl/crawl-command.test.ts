/**
 * `trawl crawl --same-domain`, run in this process: the compiled binary cannot be given host
 * names that resolve to loopback (node:dns/promises knows `localhost` but not its subdomains),
 * so this file answers `*.localhost` with 127.0.0.1, as engine-domains.test.ts does, and calls
 * the command itself. Without the flag the crawl stays on the seed's host; with it, it follows
 * the other hosts of the seed's registrable domain, and no other domain.
 */
import { afterAll, describe, expect, mock, test } from 'bun:test'
import * as realDns from 'node:dns/promises'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

const realLookup = realDns.lookup
mock.module('node:dns/promises', () => ({
  ...realDns,
  lookup: (host: string, opts?: { all?: boolean }) =>
    host.endsWith('.localhost') ? Promise.resolve(opts?.all ? [{ address: '127.0.0.1', family: 4 }] : { address: '127.0.0.1', family: 4 }) : realLookup(host, opts as never),
}))

const { crawlCommand } = await import('../../src/cli/crawl')
const { crawlSite, withSite } = await import('../helpers/crawl-site')

const dirs: string[] = []
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true })
})

/** Runs `trawl crawl` with these arguments in a fresh data dir; answers its exit status and stdout. */
async function crawl(args: string[]): Promise<{ code: number; stdout: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'trawl-crawl-command-'))
  dirs.push(dir)
  let stdout = ''
  const out = { write: (s: string) => ((stdout += s), true), isTTY: false } as unknown as NodeJS.WriteStream
  const err = { write: () => true, isTTY: false } as unknown as NodeJS.WriteStream
  const code = await crawlCommand([...args, '--data-dir', dir], out, err)
  return { code, stdout }
}

const site = () =>
  crawlSite({
    pages: {},
    hosts: {
      'a.site.localhost': { pages: { '/': { links: ['/in', 'http://b.site.localhost:{port}/sib', 'http://site.localhost:{port}/apex', 'http://other.localhost:{port}/oth'] }, '/in': {} } },
      'b.site.localhost': { pages: { '/sib': {} } },
      'site.localhost': { pages: { '/apex': {} } },
      'other.localhost': { pages: { '/oth': {} } },
    },
  })
const fetched = (s: ReturnType<typeof crawlSite>) =>
  s.requests
    .filter((r) => r.pathname !== '/robots.txt')
    .map((r) => `${r.host}${r.path}`)
    .sort()

describe('trawl crawl --same-domain', () => {
  test("without it: the seed's host only", () =>
    withSite(site(), async (s) => {
      const r = await crawl([s.url('/', 'a.site.localhost')])
      expect(r.code, r.stdout).toBe(0)
      expect(fetched(s)).toEqual(['a.site.localhost/', 'a.site.localhost/in'])
    }))

  test("with it: every host of the seed's registrable domain, not another domain", () =>
    withSite(site(), async (s) => {
      const r = await crawl([s.url('/', 'a.site.localhost'), '--same-domain'])
      expect(r.code, r.stdout).toBe(0)
      expect(r.stdout).toContain('outcome: complete')
      expect(fetched(s)).toEqual(['a.site.localhost/', 'a.site.localhost/in', 'b.site.localhost/sib', 'site.localhost/apex'])
    }))
})
