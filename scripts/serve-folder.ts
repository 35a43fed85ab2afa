// Serves a folder of static files on 127.0.0.1, so a crawl can be tried without the internet:
// `bun scripts/serve-folder.ts DIR [--port N]` (`npm run site` serves examples/site on port 8000).
// A directory answers its index.html (a directory named without its trailing slash is redirected
// to it first, so the page's relative links resolve as they would on any web server); anything
// else that is not a file in DIR is a 404, with DIR's 404.html as its body when there is one.
import { realpathSync, statSync } from 'node:fs'
import { resolve, sep } from 'node:path'

export type FolderServer = { origin: string; port: number; stop(): void }

// robots.txt and sitemaps must name absolute URLs, and the example site's are written for the
// default port. On another port (or host name) they are answered with the origin the request
// came to, so a crawl that follows them stays on the site it was given.
const DEFAULT_ORIGIN = 'http://127.0.0.1:8000'

export function serveFolder(dir: string, port = 8000): FolderServer {
  const root = realpathSync(dir)
  if (!statSync(root).isDirectory()) throw new Error(`${dir} is not a directory`)

  const server = Bun.serve({
    hostname: '127.0.0.1',
    port,
    async fetch(req) {
      if (req.method !== 'GET' && req.method !== 'HEAD') {
        return new Response('method not allowed\n', { status: 405, headers: { Allow: 'GET, HEAD' } })
      }
      const url = new URL(req.url)
      const path = safePath(url.pathname)
      if (path === null) return new Response('bad path\n', { status: 400 })

      let file = resolve(root, '.' + path)
      const kind = fileKind(file)
      if (kind === 'dir') {
        if (!url.pathname.endsWith('/')) {
          return new Response(null, { status: 301, headers: { Location: url.pathname + '/' + url.search } })
        }
        file = resolve(file, 'index.html')
      }
      // realpath, so a symbolic link inside DIR cannot lead out of it either.
      const real = fileKind(file) === 'file' ? realpathSync(file) : null
      if (real === null || (real !== root && !real.startsWith(root + sep))) return notFound(root)

      const body = Bun.file(real)
      if (real.endsWith(`${sep}robots.txt`) || real.endsWith('.xml')) {
        const text = (await body.text()).replaceAll(DEFAULT_ORIGIN, url.origin)
        return new Response(text, { headers: { 'Content-Type': body.type } })
      }
      return new Response(body)
    },
  })
  const origin = `http://127.0.0.1:${server.port}`
  return { origin, port: server.port!, stop: () => void server.stop(true) }
}

/**
 * The decoded path, or null when it could name something outside the folder: a `..` segment
 * (also spelled `%2e%2e` or behind an encoded slash or backslash) or a NUL byte.
 */
export function safePath(pathname: string): string | null {
  let decoded: string
  try {
    decoded = decodeURIComponent(pathname)
  } catch {
    return null
  }
  if (decoded.includes('\0') || !decoded.startsWith('/')) return null
  if (decoded.split(/[/\\]/).some((segment) => segment === '..')) return null
  return decoded
}

function fileKind(path: string): 'file' | 'dir' | null {
  try {
    const st = statSync(path)
    return st.isDirectory() ? 'dir' : st.isFile() ? 'file' : null
  } catch {
    return null
  }
}

function notFound(root: string): Response {
  const page = resolve(root, '404.html')
  if (fileKind(page) === 'file') return new Response(Bun.file(page), { status: 404 })
  return new Response('not found\n', { status: 404, headers: { 'Content-Type': 'text/plain;charset=utf-8' } })
}

if (import.meta.main) {
  const args = process.argv.slice(2)
  const usage = 'usage: bun scripts/serve-folder.ts DIR [--port N]'
  let dir: string | undefined
  let port = 8000
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!
    if (arg === '--port') {
      const value = args[++i]
      port = Number(value)
      if (value === undefined || !Number.isInteger(port) || port < 0 || port > 65535) {
        console.error(`--port: ${value ?? '(missing)'} is not a port number (0-65535)\n${usage}`)
        process.exit(2)
      }
    } else if (arg === '--help' || arg === '-h') {
      console.log(usage)
      process.exit(0)
    } else if (arg.startsWith('-') || dir !== undefined) {
      console.error(`unexpected argument ${arg}\n${usage}`)
      process.exit(2)
    } else {
      dir = arg
    }
  }
  if (dir === undefined) {
    console.error(usage)
    process.exit(2)
  }
  if (fileKind(dir) !== 'dir') {
    console.error(`${dir} is not a directory`)
    process.exit(2)
  }
  let served: FolderServer
  try {
    served = serveFolder(dir, port)
  } catch (err) {
    console.error(`cannot listen on 127.0.0.1:${port}: ${(err as Error).message}`)
    process.exit(1)
  }
  console.log(`serving ${dir} at ${served.origin}/ (Ctrl-C stops)`)
}
