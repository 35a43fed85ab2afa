import { lookup } from 'node:dns/promises'
import { isIP } from 'node:net'
import { FetchError } from './errors'

/**
 * The address guard (design.md §6; docs/fetch.md). A target is refused when any address its
 * name resolves to is loopback, private, link-local, CGNAT, metadata, multicast or otherwise
 * not a public unicast address. The caller connects to the address that was checked, so a
 * second DNS answer (rebinding) cannot slip past.
 */

type Range = { bits: bigint; prefix: number; why: string; width: 32 | 128 }

const V4_RANGES: [string, number, string][] = [
  ['0.0.0.0', 8, 'a "this network" address'],
  ['10.0.0.0', 8, 'a private address'],
  ['100.64.0.0', 10, 'a shared (CGNAT) address'],
  ['127.0.0.0', 8, 'a loopback address'],
  ['169.254.0.0', 16, 'a link-local address (cloud metadata lives here)'],
  ['172.16.0.0', 12, 'a private address'],
  ['192.0.0.0', 24, 'an IETF protocol address'],
  ['192.0.2.0', 24, 'a documentation address'],
  ['192.88.99.0', 24, 'a 6to4 relay address'],
  ['192.168.0.0', 16, 'a private address'],
  ['198.18.0.0', 15, 'a benchmarking address'],
  ['198.51.100.0', 24, 'a documentation address'],
  ['203.0.113.0', 24, 'a documentation address'],
  ['224.0.0.0', 4, 'a multicast address'],
  ['240.0.0.0', 4, 'a reserved address'],
]
const V6_RANGES: [string, number, string][] = [
  ['::', 128, 'the unspecified address'],
  ['::1', 128, 'a loopback address'],
  ['100::', 64, 'a discard address'],
  ['2001::', 23, 'an IETF protocol address'],
  ['2001:db8::', 32, 'a documentation address'],
  ['fc00::', 7, 'a unique-local (private) address'],
  ['fe80::', 10, 'a link-local address'],
  ['fec0::', 10, 'a site-local address'],
  ['ff00::', 8, 'a multicast address'],
  ['3fff::', 20, 'a documentation address'],
]

const ranges: Range[] = [
  ...V4_RANGES.map(([a, prefix, why]) => ({ bits: v4Bits(a)!, prefix, why, width: 32 as const })),
  ...V6_RANGES.map(([a, prefix, why]) => ({ bits: v6Bits(a)!, prefix, why, width: 128 as const })),
]

function v4Bits(ip: string): bigint | null {
  const parts = ip.split('.')
  if (parts.length !== 4) return null
  let n = 0n
  for (const p of parts) {
    if (!/^\d{1,3}$/.test(p) || Number(p) > 255) return null
    n = (n << 8n) | BigInt(Number(p))
  }
  return n
}

function v6Bits(ip: string): bigint | null {
  let text = ip.replace(/^\[|\]$/g, '').replace(/%.*$/, '')
  // A trailing dotted quad (::ffff:1.2.3.4) is the last 32 bits.
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text)
  let tail: bigint | null = null
  if (dotted) {
    tail = v4Bits(dotted[1]!)
    if (tail === null) return null
    text = text.slice(0, -dotted[1]!.length) + '0:0'
  }
  const halves = text.split('::')
  if (halves.length > 2) return null
  const head = halves[0] ? halves[0].split(':') : []
  const rest = halves.length === 2 && halves[1] ? halves[1].split(':') : []
  const missing = 8 - head.length - rest.length
  if (halves.length === 1 ? missing !== 0 : missing < 1) return null
  const groups = [...head, ...Array(halves.length === 2 ? missing : 0).fill('0'), ...rest]
  let n = 0n
  for (const g of groups) {
    if (!/^[0-9a-f]{1,4}$/i.test(g)) return null
    n = (n << 16n) | BigInt(parseInt(g, 16))
  }
  return tail === null ? n : (n & ~0xffffffffn) | tail
}

const inRange = (bits: bigint, width: number, r: Range) => r.width === width && bits >> BigInt(r.width - r.prefix) === r.bits >> BigInt(r.width - r.prefix)

/**
 * Why an IP address may not be fetched, or null when it is a public unicast address.
 * IPv6 forms that carry an IPv4 address (mapped, compatible, NAT64, 6to4) answer for that address.
 */
export function blockedReason(ip: string): string | null {
  const v4 = v4Bits(ip)
  if (v4 !== null) return ranges.find((r) => inRange(v4, 32, r))?.why ?? null
  const v6 = v6Bits(ip)
  if (v6 === null) return 'not an IP address'
  const embedded = embeddedV4(v6)
  if (embedded !== null) {
    const why = blockedReason(embedded)
    return why && `${why} (${ip} carries ${embedded})`
  }
  const why = ranges.find((r) => inRange(v6, 128, r))?.why
  if (why) return why
  // Only global unicast (2000::/3) is public; everything else is reserved or local.
  return v6 >> 125n === 1n ? null : 'a reserved IPv6 address'
}

/**
 * Whether a connection to `ip` stays on this machine: a loopback or unspecified address, in any
 * spelling (IPv4-mapped and other IPv6 forms that carry an IPv4 address answer for it).
 */
export function isLocalMachine(ip: string): boolean {
  const v4 = v4Bits(ip)
  if (v4 !== null) return v4 >> 24n === 127n || v4 >> 24n === 0n
  const v6 = v6Bits(ip)
  if (v6 === null) return false
  const embedded = embeddedV4(v6)
  if (embedded !== null) return isLocalMachine(embedded)
  return v6 === 0n || v6 === 1n
}

function embeddedV4(v6: bigint): string | null {
  const low = v6 & 0xffffffffn
  const quad = () => [24n, 16n, 8n, 0n].map((s) => (low >> s) & 0xffn).join('.')
  const top96 = v6 >> 32n
  if (top96 === 0xffffn || (top96 === 0n && low > 1n)) return quad() // ::ffff:a.b.c.d, ::a.b.c.d
  if (top96 === 0xffff0000n) return quad() // ::ffff:0:a.b.c.d (IPv4-translated)
  if (v6 >> 80n === 0x64ff9b0001n) return quad() // 64:ff9b:1::/48, local-use NAT64
  if (v6 >> 32n === 0x64ff9b0000000000000000n) return quad() // 64:ff9b::/96 NAT64
  if (v6 >> 112n === 0x2002n) {
    // 6to4: 2002:AABB:CCDD::/48 carries AA.BB.CC.DD
    const v4 = (v6 >> 80n) & 0xffffffffn
    return [24n, 16n, 8n, 0n].map((s) => (v4 >> s) & 0xffn).join('.')
  }
  return null
}

export type Resolved = { address: string; family: 4 | 6 }

/** Resolves a URL's hostname (IP literals as they are) and checks every address it has; answers the first. */
export async function resolveChecked(hostname: string, allowPrivate: boolean): Promise<Resolved> {
  return (await resolveAllChecked(hostname, allowPrivate))[0]!
}

/**
 * An IP literal's address, checked, without going through a promise; null for a name (which
 * needs DNS: resolveAllChecked).
 */
export function literalChecked(hostname: string, allowPrivate: boolean): Resolved[] | null {
  const host = hostname.replace(/^\[|\]$/g, '')
  const family = isIP(host)
  if (!family) return null
  const why = allowPrivate ? null : blockedReason(host)
  if (why) throw new FetchError('blocked_address', `${host}, ${why}; set TRAWL_ALLOW_PRIVATE_NETWORKS=true to allow it`)
  return [{ address: host, family: family as 4 | 6 }]
}

/** Every address of a hostname, each checked (any refused address refuses the name). */
export async function resolveAllChecked(hostname: string, allowPrivate: boolean, resolve?: Lookup): Promise<Resolved[]> {
  return literalChecked(hostname, allowPrivate) ?? resolveNameChecked(hostname, allowPrivate, resolve)
}

/** How a host name becomes addresses: the system resolver, or a test's own answers. */
export type Lookup = (host: string) => Promise<Resolved[]>

const systemLookup: Lookup = async (host) => (await lookup(host, { all: true, verbatim: true })) as Resolved[]

/** Every address a host name (not an IP literal: see literalChecked) resolves to, each checked. */
export async function resolveNameChecked(host: string, allowPrivate: boolean, resolve: Lookup = systemLookup): Promise<Resolved[]> {
  let addresses: Resolved[]
  try {
    addresses = await resolve(host)
  } catch (err) {
    const code = (err as { code?: string }).code
    throw new FetchError('dns', `${host} could not be resolved${code ? ` (${code})` : ''}`, code === 'EAI_AGAIN' || code === 'ETIMEOUT')
  }
  if (!addresses.length) throw new FetchError('dns', `${host} has no address`)
  if (!allowPrivate) {
    for (const a of addresses) {
      const why = blockedReason(a.address)
      if (why) throw new FetchError('blocked_address', `${host} resolves to ${a.address}, ${why}; set TRAWL_ALLOW_PRIVATE_NETWORKS=true to allow it`)
    }
  }
  return addresses
}

/** Whether the URL's scheme may be fetched at all. */
export const fetchableScheme = (url: URL) => url.protocol === 'http:' || url.protocol === 'https:'
