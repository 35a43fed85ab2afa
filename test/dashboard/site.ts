/**
 * The fixture site the dashboard's browser test and scripts/screenshots.ts crawl, on 127.0.0.1:
 * a home page linking to two articles and a missing page (a 404), and a slow chain of pages
 * (`/slow/0` → `/slow/1` → …, each answering after `slowMs`) for a run that is still crawling
 * while it is paused and resumed.
 */
export function dashboardSite(slowMs = 300) {
  const page = (title: string, body: string) =>
    new Response(`<!doctype html><html><head><title>${title}</title></head><body><nav><a href="/">Home</a></nav><main><article><h1>${title}</h1>${body}</article></main></body></html>`, {
      headers: { 'content-type': 'text/html; charset=utf-8' },
    })
  const server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    async fetch(req) {
      const path = new URL(req.url).pathname
      if (path === '/robots.txt') return new Response('User-agent: *\nAllow: /\n', { headers: { 'content-type': 'text/plain' } })
      if (path === '/')
        return page('Fixture home', '<p>Welcome to the fixture home.</p><ul><li><a href="/alpha">Alpha</a></li><li><a href="/beta">Beta</a></li><li><a href="/missing">Gone</a></li></ul>')
      if (path === '/alpha') return page('Alpha', '<p>The alpha page says hello from the fixture site.</p><p><a href="/beta">On to beta</a></p>')
      if (path === '/beta') return page('Beta', '<p>The beta page is the second article.</p><table><tr><th>k</th><th>v</th></tr><tr><td>one</td><td>1</td></tr></table>')
      const slow = /^\/slow\/(\d+)$/.exec(path)
      if (slow) {
        await Bun.sleep(slowMs)
        const i = Number(slow[1])
        return page(`Slow ${i}`, `<p>Slow page ${i}.</p><a href="/slow/${i + 1}">next</a>`)
      }
      return new Response('not here', { status: 404, headers: { 'content-type': 'text/plain' } })
    },
  })
  const origin = `http://127.0.0.1:${server.port}`
  return { origin, stop: () => server.stop(true) }
}
