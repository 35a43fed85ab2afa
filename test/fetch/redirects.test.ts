import { describe, expect, test } from 'bun:test'
import { metaRefresh, nextMethod } from '../../src/fetch/redirects'

const page = (head: string) => new TextEncoder().encode(`<!doctype html><html><head>${head}</head><body>x</body></html>`)

describe('metaRefresh', () => {
  test.each([
    ['<meta http-equiv="refresh" content="0; url=/next">', 'https://a.test/next', 0],
    ['<meta http-equiv=Refresh content="3;URL=\'https://b.test/x\'">', 'https://b.test/x', 3],
    ['<meta content="0;url=next.html" http-equiv="REFRESH">', 'https://a.test/dir/next.html', 0],
    ['<meta http-equiv="refresh" content="5, /comma">', 'https://a.test/comma', 5],
    ['<meta http-equiv="refresh" content="0; URL = \'/quoted?a=1&amp;b=2\'">', 'https://a.test/quoted?a=1&b=2', 0],
  ])('%s', async (head, location, delay) => {
    expect(await metaRefresh(page(head), 'text/html', 'https://a.test/dir/page')).toEqual({ location, delay })
  })

  test.each([
    ['a reload of the page itself', '<meta http-equiv="refresh" content="0; url=/dir/page#top">'],
    ['a delay over 30 s', '<meta http-equiv="refresh" content="60; url=/later">'],
    ['no URL', '<meta http-equiv="refresh" content="5">'],
    ['inside noscript', '<noscript><meta http-equiv="refresh" content="0; url=/nojs"></noscript>'],
    ['a javascript: target', '<meta http-equiv="refresh" content="0; url=javascript:alert(1)">'],
  ])('not a redirect: %s', async (_, head) => {
    expect(await metaRefresh(page(head), 'text/html; charset=utf-8', 'https://a.test/dir/page')).toBeNull()
  })

  test('only HTML is searched', async () => {
    expect(await metaRefresh(page('<meta http-equiv="refresh" content="0; url=/x">'), 'text/plain', 'https://a.test/')).toBeNull()
  })

  test('a windows-1252 page keeps its non-ASCII target', async () => {
    const bytes = Buffer.from('<html><head><meta http-equiv="refresh" content="0; url=/caf\xe9"></head></html>', 'latin1')
    expect(await metaRefresh(bytes, 'text/html; charset=windows-1252', 'https://a.test/')).toEqual({ location: 'https://a.test/caf%C3%A9', delay: 0 })
  })
})

test('nextMethod follows the Fetch standard', () => {
  expect(nextMethod(303, 'PUT')).toEqual({ method: 'GET', keepBody: false })
  expect(nextMethod(303, 'HEAD')).toEqual({ method: 'HEAD', keepBody: true })
  expect(nextMethod(302, 'POST')).toEqual({ method: 'GET', keepBody: false })
  expect(nextMethod(301, 'PUT')).toEqual({ method: 'PUT', keepBody: true })
  expect(nextMethod(307, 'POST')).toEqual({ method: 'POST', keepBody: true })
  expect(nextMethod(308, 'PATCH')).toEqual({ method: 'PATCH', keepBody: true })
})
