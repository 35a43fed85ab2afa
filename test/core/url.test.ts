import { describe, expect, test } from 'bun:test'
import { hash32, hostHash, hostOf, hostPortOf, linkHash, normalizeHost, normalizeUrl } from '../../src/core/url'

describe('normalizeUrl', () => {
  // The test vectors of docs/api.md (design.md §3), exactly.
  test.each([
    ['HTTP://Example.COM:80/a/./b/../c?x=1#frag', 'http://example.com/a/c?x=1', 'ecdd3d64e0505ec8b45134cf86647189'],
    ['https://example.com', 'https://example.com/', '0f115db062b7c0dd030b16878c99dea5'],
    ['https://example.com/%7euser/%2fx?', 'https://example.com/~user/%2Fx', 'b8eeeba68d6cb6d3eef004680163d55f'],
    ['https://bücher.example/', 'https://xn--bcher-kva.example/', '7971a8be6267ce24bde810901c82e8c4'],
    ['https://example.com./dir/', 'https://example.com/dir/', '7312b85582d115d1456803ef1c999a84'],
  ])('%s', (input, normalized, hash) => {
    expect(normalizeUrl(input)).toBe(normalized)
    expect(linkHash(normalizeUrl(input)!)).toBe(hash)
  })

  test('host hash vector', () => {
    expect(normalizeHost('Example.COM')).toBe('example.com')
    expect(hostHash(normalizeHost('Example.COM')!)).toBe('a379a6f6eeafb9a55e378c118034e275')
  })

  test('keeps path case, trailing slashes and query order', () => {
    expect(normalizeUrl('https://a.example/Dir/')).toBe('https://a.example/Dir/')
    expect(normalizeUrl('https://a.example/dir')).toBe('https://a.example/dir')
    expect(normalizeUrl('https://a.example/p?b=2&a=1')).toBe('https://a.example/p?b=2&a=1')
  })

  test('keeps non-default ports and uppercases escapes of reserved characters', () => {
    expect(normalizeUrl('https://a.example:8443/x')).toBe('https://a.example:8443/x')
    expect(normalizeUrl('https://a.example:443/x')).toBe('https://a.example/x')
    expect(normalizeUrl('https://a.example/a%2fb%3f?q=%e2%82%ac')).toBe('https://a.example/a%2Fb%3F?q=%E2%82%AC')
  })

  test('resolves relative references against a base', () => {
    expect(normalizeUrl('../x#top', 'https://a.example/a/b/c')).toBe('https://a.example/a/x')
  })

  test.each(['ftp://a.example/', 'mailto:a@b.c', 'javascript:alert(1)', 'not a url', '', 'http://'])('rejects %p', (input) => {
    expect(normalizeUrl(input)).toBeNull()
  })
})

describe('normalizeHost', () => {
  test('lowercases, punycodes and drops a trailing dot', () => {
    expect(normalizeHost('WWW.Bücher.Example.')).toBe('www.xn--bcher-kva.example')
  })
  test.each(['', 'a b', 'a.example/path', 'a.example:80', 'user@a.example', 'a.example?x'])('rejects %p', (input) => {
    expect(normalizeHost(input)).toBeNull()
  })
  test('hash32 is the first 32 hex characters of SHA-256', () => {
    expect(hash32('')).toBe('e3b0c44298fc1c149afbf4c8996fb924')
  })
})

describe('hostOf and hostPortOf', () => {
  test('reads the host name of a normalized URL as URL does: no port, no user info, brackets kept', () => {
    const cases = [
      'http://a.example/x',
      'https://A.Example:8443/p?q',
      'http://[::1]:80/',
      'http://[2001:db8::1]:8080/a',
      'http://user:pw@h.example:81/',
      'http://127.0.0.1:3000',
      'http://bücher.example/',
      'http://h.example./a',
    ]
    const hosts = cases.map((u) => hostOf(normalizeUrl(u)!))
    expect(hosts).toEqual(['a.example', 'a.example', '[::1]', '[2001:db8::1]', 'h.example', '127.0.0.1', 'xn--bcher-kva.example', 'h.example'])
    expect(hosts).toEqual(cases.map((u) => new URL(normalizeUrl(u)!).hostname))
    const withPorts = cases.map((u) => hostPortOf(normalizeUrl(u)!))
    expect(withPorts).toEqual(['a.example', 'a.example:8443', '[::1]', '[2001:db8::1]:8080', 'h.example:81', '127.0.0.1:3000', 'xn--bcher-kva.example', 'h.example'])
    expect(withPorts).toEqual(cases.map((u) => new URL(normalizeUrl(u)!).host))
  })
})
