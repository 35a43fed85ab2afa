/**
 * A three-page site on loopback for the MCP tests: pages with a navigation header and a footer
 * around their article, linked to each other, and a product page for extraction.
 */

const page = (title: string, article: string) =>
  `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${title}</title><meta name="description" content="${title} of Trawlville"></head><body>` +
  `<header><nav><a href="/">Home</a> <a href="/guide">Guide</a> <a href="/price">Price</a> <span>Harbour navigation menu</span></nav></header>` +
  `<main><article>${article}</article></main>` +
  `<footer><p>Copyright footer of Trawlville</p></footer></body></html>`

export const PAGES: Record<string, { title: string; html: string; words: string }> = {
  '/': {
    title: 'Welcome to Trawlville',
    words: 'Trawlville keeps its harbour records here',
    html: page(
      'Welcome to Trawlville',
      '<h1>Welcome to Trawlville</h1><p>Trawlville keeps its harbour records here, for every boat that ever came in.</p><p>Read the <a href="/guide">harbour guide</a> first.</p>',
    ),
  },
  '/guide': {
    title: 'Harbour guide',
    words: 'Boats leave at dawn',
    html: page('Harbour guide', '<h1>Harbour guide</h1><p>Boats leave at dawn and come back before the evening tide.</p><p>Nets are sold at the <a href="/price">net shop</a>.</p>'),
  },
  '/price': {
    title: 'Net shop',
    words: 'A good net lasts ten seasons',
    html: page('Net shop', '<h1 class="name">Trawl net</h1><p>A good net lasts ten seasons.</p><span class="price">12.50</span><ul><li class="size">small</li><li class="size">large</li></ul>'),
  },
  // Linked from nowhere: a crawl reaches it only as its seed.
  '/long': {
    title: 'Tide tables',
    words: 'High water at',
    html: page('Tide tables', `<h1>Tide tables</h1>${Array.from({ length: 60 }, (_, i) => `<p>High water at ${String(i % 24).padStart(2, '0')}:15 on day ${i + 1}.</p>`).join('')}`),
  },
}

export type McpSite = { origin: string; url(path: string): string; hits: Map<string, number>; close(): void }

export function mcpSite(): McpSite {
  const hits = new Map<string, number>()
  const server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    fetch(req) {
      const path = new URL(req.url).pathname
      hits.set(path, (hits.get(path) ?? 0) + 1)
      const p = PAGES[path]
      if (!p) return new Response('not here', { status: 404 })
      return new Response(p.html, { headers: { 'content-type': 'text/html; charset=utf-8' } })
    },
  })
  const origin = `http://127.0.0.1:${server.port}`
  return { origin, url: (path) => `${origin}${path}`, hits, close: () => void server.stop(true) }
}

/** The fields the extraction tests use, and what they extract from /price. */
export const PRICE_FIELDS = [
  { name: 'name', selector: 'h1.name' },
  { name: 'price', selector: '.price', type: 'number' },
  { name: 'sizes', selector: 'li.size', multiple: true },
]
export const PRICE_DATA = { name: 'Trawl net', price: 12.5, sizes: ['small', 'large'] }
