import { describe, expect, test } from 'bun:test'
import { registrableDomain, sameScope } from '../../src/crawl/domain'

describe('registrableDomain', () => {
  test.each([
    ['example.com', 'example.com'],
    ['www.example.com', 'example.com'],
    ['a.b.c.example.com', 'example.com'],
    ['a.example.co.uk', 'example.co.uk'],
    ['WWW.Example.CO.UK', 'example.co.uk'],
    ['www.example.com.', 'example.com'],
    ['x.co.uk', 'x.co.uk'],
    // Private suffixes (the PSL's PRIVATE section) count: each github.io site has its own owner.
    ['alice.github.io', 'alice.github.io'],
    ['docs.alice.github.io', 'alice.github.io'],
    ['bucket.s3.amazonaws.com', 'bucket.s3.amazonaws.com'],
    ['shop.myshopify.com', 'shop.myshopify.com'],
    ['a.b.xn--55qx5d.cn', 'b.xn--55qx5d.cn'],
    ['www.xn--bcher-kva.example', 'xn--bcher-kva.example'],
    ['host.unknown-tld-zz', 'host.unknown-tld-zz'],
  ])('%s → %s', (host, domain) => {
    expect(registrableDomain(host)).toBe(domain)
  })

  test.each(['localhost', 'intranet', '127.0.0.1', '10.1.2.3', '[::1]', '[2001:db8::1]', '::1'])('%s answers itself', (host) => {
    expect(registrableDomain(host)).toBe(host)
  })

  test('a public suffix answers itself', () => {
    expect(registrableDomain('co.uk')).toBe('co.uk')
    expect(registrableDomain('github.io')).toBe('github.io')
  })
})

describe('sameScope', () => {
  const u = (s: string) => new URL(s)

  test('same_host: case, trailing dot and port do not matter; subdomains do', () => {
    expect(sameScope(u('https://Example.com/a'), u('http://example.COM:8080/b'), 'same_host')).toBe(true)
    expect(sameScope(u('https://example.com/'), u('https://example.com./x'), 'same_host')).toBe(true)
    expect(sameScope(u('https://example.com/'), u('https://www.example.com/'), 'same_host')).toBe(false)
    expect(sameScope(u('https://127.0.0.1:8080/'), u('http://127.0.0.1/'), 'same_host')).toBe(true)
    expect(sameScope(u('http://[::1]:81/'), u('http://[::1]/'), 'same_host')).toBe(true)
  })

  test('same_domain: registrable domains under the PSL', () => {
    expect(sameScope(u('https://a.example.co.uk/'), u('https://b.example.co.uk/'), 'same_domain')).toBe(true)
    expect(sameScope(u('https://example.co.uk/'), u('https://www.example.co.uk/'), 'same_domain')).toBe(true)
    expect(sameScope(u('https://x.co.uk/'), u('https://y.co.uk/'), 'same_domain')).toBe(false)
    expect(sameScope(u('https://alice.github.io/'), u('https://bob.github.io/'), 'same_domain')).toBe(false)
    expect(sameScope(u('https://alice.github.io/'), u('https://docs.alice.github.io/'), 'same_domain')).toBe(true)
    expect(sameScope(u('https://WWW.Example.com./'), u('https://api.example.com:8443/'), 'same_domain')).toBe(true)
    expect(sameScope(u('https://example.com/'), u('https://example.org/'), 'same_domain')).toBe(false)
    expect(sameScope(u('http://10.0.0.1/'), u('http://10.0.0.2/'), 'same_domain')).toBe(false)
    expect(sameScope(u('http://localhost:3000/'), u('http://localhost:4000/'), 'same_domain')).toBe(true)
  })

  test('same_domain works on internationalized hosts (URL gives punycode)', () => {
    expect(sameScope(u('https://www.bücher.example/'), u('https://shop.xn--bcher-kva.example/'), 'same_domain')).toBe(true)
  })

  test('any', () => {
    expect(sameScope(u('https://example.com/'), u('https://elsewhere.org/'), 'any')).toBe(true)
  })
})
