/** A route as the router holds it: Elysia's `app.routes`, our routes and the docs' alike. */
export type Registered = { method: string; path: string }

// The order of the Allow header: reads first, then writes, then OPTIONS.
const ORDER = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']

/**
 * Elysia's path syntax as a regex: `:name` is one non-empty segment, a trailing `*` the rest of
 * the path (empty too), and a trailing slash is optional, as the router treats it (strictPath off).
 */
function patternOf(path: string): RegExp {
  const source = path
    .split('/')
    .map((segment, i, all) => {
      if (segment === '*' && i === all.length - 1) return '.*'
      if (segment.startsWith(':')) return '[^/]+'
      return segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
    })
    .join('/')
  return new RegExp(source.endsWith('.*') ? `^${source}$` : `^${source}/?$`)
}

/**
 * The methods a path is answered with (the Allow header of a 405), from what the router holds,
 * so a route added anywhere is in it: none when no route has the path (a 404). HEAD goes with GET,
 * which Elysia answers HEAD with; OPTIONS when the surface answers preflights itself (`options`).
 */
export function allowedMethods(routes: () => Registered[], opts: { options: boolean }): (path: string) => string[] {
  let table: { method: string; pattern: RegExp }[] | null = null
  return (path) => {
    // Built on first use: the routes are all mounted by the time a request comes.
    table ??= routes().map((r) => ({ method: r.method.toUpperCase(), pattern: patternOf(r.path) }))
    const methods = new Set(table.filter((r) => r.pattern.test(path)).map((r) => r.method))
    if (methods.size === 0) return []
    if (methods.has('GET')) methods.add('HEAD')
    if (opts.options) methods.add('OPTIONS')
    const rank = (m: string) => (ORDER.includes(m) ? ORDER.indexOf(m) : ORDER.length)
    return [...methods].sort((a, b) => rank(a) - rank(b) || a.localeCompare(b))
  }
}
