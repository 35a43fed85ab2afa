import { describe, expect, test } from 'bun:test'
import { CookieJar, parseSetCookie } from '../../src/fetch/cookies'

const at = (u: string) => new URL(u)
const NOW = Date.parse('2026-11-22T12:00:00Z')

describe('parseSetCookie', () => {
  test('every attribute', () => {
    const c = parseSetCookie('sid="a b"; Domain=.Example.com; Path=/app; Expires=Wed, 21 Oct 2037 07:28:00 GMT; HttpOnly; Secure; SameSite=lax', at('https://www.example.com/x'), NOW)
    expect(c).toEqual({ name: 'sid', value: 'a b', domain: 'example.com', path: '/app', expires: '2037-10-21T07:28:00.000Z', http_only: true, secure: true, same_site: 'Lax' })
  })

  test('defaults: host-only domain and the directory of the request path; Max-Age wins over Expires', () => {
    const c = parseSetCookie('a=1; Max-Age=60; Expires=Wed, 21 Oct 2037 07:28:00 GMT', at('http://shop.test/cart/items?x=1'), NOW)
    expect(c).toMatchObject({ name: 'a', value: '1', domain: 'shop.test', path: '/cart', expires: '2026-11-22T12:01:00.000Z', hostOnly: true })
  })

  test('a cookie for another site, a nameless one or an unknown SameSite', () => {
    expect(parseSetCookie('a=1; Domain=evil.test', at('http://shop.test/'))).toBeNull()
    expect(parseSetCookie('=1', at('http://shop.test/'))).toBeNull()
    expect(parseSetCookie('novalue', at('http://shop.test/'))).toBeNull()
    expect(parseSetCookie('a=1; SameSite=Sometimes', at('http://shop.test/'))?.same_site).toBeUndefined()
  })
})

describe('CookieJar', () => {
  test('sends the caller cookies that match by domain, path, secure and expiry', () => {
    const jar = new CookieJar(
      [
        { name: 'host', value: '1' },
        { name: 'dom', value: '2', domain: 'example.com' },
        { name: 'deep', value: '3', domain: 'example.com', path: '/app' },
        { name: 'sec', value: '4', domain: 'example.com', secure: true },
        { name: 'old', value: '5', domain: 'example.com', expires: '2001-01-01T00:00:00Z' },
        { name: 'other', value: '6', domain: 'other.test' },
      ],
      at('http://www.example.com/'),
    )
    expect(jar.headerFor(at('http://www.example.com/app/x'))).toBe('deep=3; host=1; dom=2')
    expect(jar.headerFor(at('https://api.example.com/application'))).toBe('dom=2; sec=4')
    expect(jar.headerFor(at('http://other.test/'))).toBe('other=6')
    expect(jar.headerFor(at('http://nothing.test/'))).toBeNull()
  })

  test('Set-Cookie joins the jar, replaces a cookie of the same name, domain and path, and is reported', () => {
    const jar = new CookieJar([{ name: 'a', value: 'old', domain: 'shop.test', path: '/' }], at('http://shop.test/'))
    jar.receive(['a=new; Path=/', 'b=2; Path=/; HttpOnly', 'c=3; Domain=evil.test'], at('http://shop.test/login'))
    expect(jar.headerFor(at('http://shop.test/'))).toBe('a=new; b=2')
    expect(jar.received).toEqual([
      { name: 'a', value: 'new', domain: 'shop.test', path: '/' },
      { name: 'b', value: '2', domain: 'shop.test', path: '/', http_only: true },
    ])
  })
})

describe('cookies a browser would not keep are reported but not sent on', () => {
  test.each([
    ['a Secure cookie over http', 'a=1; Secure; Path=/', 'http://shop.example.com/', 'http://shop.example.com/'],
    ['a public suffix', 'a=1; Domain=com; Path=/', 'https://evil.com/', 'https://bank.com/'],
    ['a private public suffix', 'a=1; Domain=github.io; Path=/', 'https://evil.github.io/', 'https://good.github.io/'],
    ['part of an IP address', 'a=1; Domain=215.14; Path=/', 'http://93.184.215.14/', 'http://10.20.215.14/'],
  ])('%s', (_, line, from, to) => {
    const jar = new CookieJar([], at(from))
    jar.receive([line], at(from))
    expect(jar.received.map((c) => c.name)).toEqual(['a'])
    expect(jar.headerFor(at(to))).toBeNull()
  })

  test('a parent-domain cookie of a real site is kept', () => {
    const jar = new CookieJar([], at('https://www.example.co.uk/'))
    jar.receive(['a=1; Domain=example.co.uk; Path=/'], at('https://www.example.co.uk/'))
    expect(jar.headerFor(at('https://shop.example.co.uk/x'))).toBe('a=1')
  })
})
