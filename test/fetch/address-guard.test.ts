import { describe, expect, test } from 'bun:test'
import { blockedReason, isLocalMachine, resolveChecked } from '../../src/fetch/address-guard'
import { FetchError } from '../../src/fetch/errors'

describe('blockedReason', () => {
  test.each([
    ['127.0.0.1', 'loopback'],
    ['127.255.255.254', 'loopback'],
    ['10.1.2.3', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['192.168.1.1', 'private'],
    ['169.254.169.254', 'link-local'],
    ['100.64.0.1', 'CGNAT'],
    ['100.127.255.255', 'CGNAT'],
    ['0.0.0.0', 'this network'],
    ['224.0.0.1', 'multicast'],
    ['255.255.255.255', 'reserved'],
    ['192.0.2.10', 'documentation'],
    ['198.18.0.1', 'benchmarking'],
    ['::1', 'loopback'],
    ['::', 'unspecified'],
    ['fe80::1', 'link-local'],
    ['fd00:ec2::254', 'unique-local'],
    ['fc00::1', 'unique-local'],
    ['ff02::1', 'multicast'],
    ['2001:db8::1', 'documentation'],
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:7f00:1', 'loopback'],
    ['0:0:0:0:0:ffff:a9fe:a9fe', 'link-local'],
    ['64:ff9b::169.254.169.254', 'link-local'],
    ['2002:c0a8:101::1', 'private'],
    ['::10.0.0.1', 'private'],
  ])('%s is refused (%s)', (ip, why) => {
    expect(blockedReason(ip)).toContain(why)
  })

  test.each(['8.8.8.8', '1.1.1.1', '172.32.0.1', '100.128.0.1', '192.169.0.1', '2606:4700:4700::1111', '::ffff:8.8.8.8', '2002:808:808::1', '64:ff9b::808:808'])('%s is a public address', (ip) =>
    expect(blockedReason(ip)).toBeNull(),
  )

  // IPv4-translated (::ffff:0:0/96) and local-use NAT64 (64:ff9b:1::/48) forms of non-public
  // IPv4 addresses, and the IPv6 documentation prefix 3fff::/20 (RFC 9637).
  test.each(['::ffff:0:127.0.0.1', '::ffff:0:7f00:1', '::ffff:0:a9fe:a9fe', '::ffff:0:10.0.0.1', '64:ff9b:1::a00:1', '64:ff9b:1::127.0.0.1', '64:ff9b:1::a9fe:a9fe', '3fff::1', '3fff:fff:ffff::1'])(
    '%s is refused',
    (ip) => {
      expect(blockedReason(ip)).not.toBeNull()
    },
  )

  test('the IPv4-translated loopback names what it carries', () => {
    expect(blockedReason('::ffff:0:127.0.0.1')).toContain('loopback')
  })

  // Only global unicast (2000::/3) is public: SRv6 SIDs (5f00::/16) and every unassigned prefix are not.
  test.each(['5f00::1', '5f00:ffff::1', '4000::1', '6000::1', '8000::1', 'c000::1', 'e000::1', '1000::1', '1::1', '400::1', 'fbff::1', '1fff:ffff::1', '4000::'])(
    '%s, outside 2000::/3, is refused',
    (ip) => {
      expect(blockedReason(ip)).not.toBeNull()
    },
  )

  test.each(['2606:4700::1111', '2000::1', '2a00:1450:4001::200e'])('%s stays public', (ip) => expect(blockedReason(ip)).toBeNull())

  test('anything that is not an IP address is refused', () => {
    expect(blockedReason('example.com')).toBe('not an IP address')
    expect(blockedReason('1.2.3')).toBe('not an IP address')
    expect(blockedReason('1:2:3:4:5:6:7:8:9')).toBe('not an IP address')
  })
})

describe('resolveChecked', () => {
  test('a name that resolves to loopback is refused, naming the address and the setting', async () => {
    const err = (await resolveChecked('localhost', false).catch((e) => e)) as FetchError
    expect(err).toBeInstanceOf(FetchError)
    expect(err.code).toBe('blocked_address')
    expect(err.message).toContain('localhost resolves to 127.0.0.1')
    expect(err.message).toContain('TRAWL_ALLOW_PRIVATE_NETWORKS=true')
  })

  test('with private networks allowed it resolves', async () => {
    expect(await resolveChecked('localhost', true)).toMatchObject({ address: expect.stringMatching(/^(127\.0\.0\.1|::1)$/) })
    expect(await resolveChecked('[::1]', true)).toEqual({ address: '::1', family: 6 })
  })

  test('IP literals are checked without DNS', async () => {
    const err = (await resolveChecked('[::ffff:7f00:1]', false).catch((e) => e)) as FetchError
    expect(err.code).toBe('blocked_address')
    expect(err.message).toContain('carries 127.0.0.1')
  })

  test.each(['[::ffff:0:127.0.0.1]', '[64:ff9b:1::a00:1]', '[3fff::1]', '[5f00::1]', '[4000::1]'])('the literal %s is refused without DNS', async (host) => {
    const err = (await resolveChecked(host, false).catch((e) => e)) as FetchError
    expect(err).toBeInstanceOf(FetchError)
    expect(err.code).toBe('blocked_address')
  })

  test('a name that does not resolve is a dns error', async () => {
    const err = (await resolveChecked('nonexistent.invalid', false).catch((e) => e)) as FetchError
    expect(err.code).toBe('dns')
    expect(err.message).toContain('nonexistent.invalid')
  })
})

describe('isLocalMachine', () => {
  test('loopback and unspecified addresses in every spelling; nothing else', () => {
    for (const ip of ['127.0.0.1', '127.9.9.9', '0.0.0.0', '::1', '::', '::ffff:127.0.0.1', '::ffff:7f00:1', '[::1]', '::ffff:0:127.0.0.1']) expect(isLocalMachine(ip), ip).toBe(true)
    for (const ip of ['10.0.0.1', '192.168.1.1', '8.8.8.8', '::ffff:8.8.8.8', 'fe80::1', '2001:4860::8888', 'example.com']) expect(isLocalMachine(ip), ip).toBe(false)
  })
})
