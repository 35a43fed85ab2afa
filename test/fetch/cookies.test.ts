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
