/**
 * Crawl scope by host (job `scope.domains`): the same host, the same registrable domain
 * (eTLD+1 from the Public Suffix List, which tldts ships), or anywhere.
 */
import { getDomain } from 'tldts'

export type ScopeMode = 'same_host' | 'same_domain' | 'any'

// Private suffixes count: two github.io sites belong to two owners, so one must not pull a
// crawl into the other. The input is already a host name, so tldts need not parse a URL.
const PSL_OPTIONS = { allowPrivateDomains: true, extractHostname: false } as const

/**
 * The registrable domain of a host name (`a.b.example.co.uk` → `example.co.uk`), lowercased,
 * without a trailing dot. IP addresses, single-label hosts and hosts that are themselves a
 * public suffix answer themselves: each is its own owner.
 */
export function registrableDomain(hostname: string): string {
  const host = bareHost(hostname)
  if (!host.includes('.') || isIpLiteral(host)) return host
  return getDomain(host, PSL_OPTIONS) ?? host
}

/** Whether `b` lies in the scope of `a` (ports never matter; scheme is the caller's business). */
export function sameScope(a: URL, b: URL, mode: ScopeMode): boolean {
  if (mode === 'any') return true
  const hostA = bareHost(a.hostname)
  const hostB = bareHost(b.hostname)
  if (hostA === hostB) return true
  return mode === 'same_domain' && registrableDomain(hostA) === registrableDomain(hostB)
}

function bareHost(hostname: string): string {
  const host = hostname.toLowerCase()
  return host.endsWith('.') ? host.replace(/\.+$/, '') : host
}

// URL gives IPv6 in brackets and IPv4 in dotted decimal, whatever the spelling in the link.
function isIpLiteral(host: string): boolean {
  return host.startsWith('[') || host.includes(':') || /^\d{1,3}(\.\d{1,3}){3}$/.test(host)
}
