import { describe, expect, test } from 'bun:test'
import { importGraph, importsOf, readSource, sourceFiles, tokenize, type Edge, type Token } from './source'

/**
 * The layers of docs/architecture.md ("Layers"), read from the imports of every file under
 * src/. Routes (src/api, src/scrape/index.ts, src/mcp/http.ts) and the HTTP plumbing (src/http)
 * sit on top; nothing below them speaks HTTP, the store knows no engine, parse and extract know
 * no store, and SQLite and the network are each reached from one place.
 */

const ROUTES = ['src/api/', 'src/http/', 'src/scrape/index.ts', 'src/mcp/http.ts']
const in_ =
  (...prefixes: string[]) =>
  (path: string) =>
    prefixes.some((p) => path === p || (p.endsWith('/') && path.startsWith(p)))
const not = (f: (path: string) => boolean) => (path: string) => !f(path)
const both = (f: (path: string) => boolean, g: (path: string) => boolean) => (path: string) => f(path) && g(path)

/** Below the routes: domain, engine, storage, the CLI, and the plumbing they share. */
const BELOW_ROUTES = in_(
  'src/store/',
  'src/blob/',
  'src/crawl/',
  'src/parse/',
  'src/extract/',
  'src/fetch/',
  'src/export/',
  'src/schedule/',
  'src/payment/',
  'src/cli/',
  'src/core/',
  'src/util/',
  'src/sqlite/',
  'src/catalogue/',
  'src/metrics/',
  'src/webhooks/',
)
const SQLITE_HOMES = in_('src/store/', 'src/blob/', 'src/sqlite/')

export type Rule = { name: string; from: (file: string) => boolean; to: (target: string) => boolean }

const RULES: Rule[] = [
  { name: 'nothing below the routes imports src/http/ or src/api/', from: BELOW_ROUTES, to: in_('src/http/', 'src/api/') },
  { name: 'MCP, apart from its route, imports nothing of src/http/', from: both(in_('src/mcp/'), not(in_('src/mcp/http.ts'))), to: in_('src/http/') },
  { name: 'the scraper, apart from its route, imports nothing of src/http/ or src/api/', from: both(in_('src/scrape/'), not(in_('src/scrape/index.ts'))), to: in_('src/http/', 'src/api/') },
  { name: 'the crawl engine imports no route', from: in_('src/crawl/'), to: in_(...ROUTES) },
  { name: 'the store imports nothing of the crawl engine', from: in_('src/store/'), to: in_('src/crawl/') },
  { name: 'parse and extract import nothing of the store', from: in_('src/parse/', 'src/extract/'), to: in_('src/store/') },
  { name: 'the blob store imports nothing of the main store', from: in_('src/blob/'), to: in_('src/store/') },
  { name: 'src/core imports only src/core and src/util', from: in_('src/core/'), to: both(in_('src/'), not(in_('src/core/', 'src/util/'))) },
  { name: 'src/metrics imports nothing of src/ but itself', from: in_('src/metrics/'), to: both(in_('src/'), not(in_('src/metrics/'))) },
  { name: 'bun:sqlite is imported only by the store, the blob store and src/sqlite', from: not(SQLITE_HOMES), to: (target) => target === 'bun:sqlite' },
]

/** The imports that break a rule, each as `file:line imports 'specifier'`. */
export function breaches(edges: Edge[], rule: Rule): string[] {
  return edges.filter((e) => rule.from(e.file) && rule.to(e.target)).map((e) => `${e.file}:${e.line} imports '${e.specifier}' (${e.target})`)
}

const edges = importGraph()

describe('layers: the imports of src/', () => {
  for (const rule of RULES) {
    test(rule.name, () => {
      expect(breaches(edges, rule)).toEqual([])
    })
  }
})

// SQL in a string: a statement's opening words, as the store writes them (upper case).
const SQL =
  /^\s*(SELECT\s[\s\S]*\bFROM\b|INSERT\s+(OR\s+\w+\s+)?INTO\s|UPDATE\s+\w+\s+SET\s|DELETE\s+FROM\s|CREATE\s+(TEMP\s+)?(TABLE|INDEX|UNIQUE\s+INDEX|TRIGGER|VIEW)\s|DROP\s+(TABLE|INDEX)\s|ALTER\s+TABLE\s|PRAGMA\s|WITH\s+(RECURSIVE\s+)?\w+(\s*\([^)]*\))?\s+AS\s*\()/

/** Strings that hold SQL, and statements prepared on a database handle (`db.query(`, `.prepare(`). */
export function sqlIn(file: string, tokens: Token[] = tokenize(readSource(file))): string[] {
  const found: string[] = []
  tokens.forEach((t, k) => {
    if ((t.kind === 'string' || t.kind === 'template') && SQL.test(t.text)) found.push(`${file}:${t.line} holds SQL: ${t.text.slice(0, 60)}`)
    if (
      t.kind === 'name' &&
      /^(db|database|\w+Db)$/.test(t.text) &&
      tokens[k + 1]?.text === '.' &&
      /^(query|prepare|run|exec|transaction)$/.test(tokens[k + 2]?.text ?? '') &&
      tokens[k + 3]?.text === '('
    ) {
      found.push(`${file}:${t.line} calls ${t.text}.${tokens[k + 2]!.text}(`)
    }
  })
  return found
}

const DECLARES = new Set(['async', 'function', 'private', 'public', 'protected', 'static', 'get', 'set', 'typeof', 'readonly'])

/**
 * Uses of the runtime's `fetch` (a call, or the function handed on as a value), not a method
 * or property of that name (`fetcher.fetch(`, `fetch: …`, `async fetch(…) {`, `typeof fetch`).
 */
export function globalFetches(file: string, tokens: Token[] = tokenize(readSource(file))): string[] {
  const found: string[] = []
  tokens.forEach((t, k) => {
    if (t.kind !== 'name' || t.text !== 'fetch') return
    const before = tokens[k - 1]
    const after = tokens[k + 1]
    if (before && (before.text === '.' || before.text === '?.' || DECLARES.has(before.text))) return
    if (after && (after.text === ':' || (after.text === '?' && tokens[k + 2]?.text === ':'))) return
    if (after?.text === '(') {
      // A method written without a modifier: `fetch(…) {` or `fetch(…): T {`.
      let depth = 0
      let m = k + 1
      for (; m < tokens.length; m++) {
        if (tokens[m]!.text === '(') depth++
        if (tokens[m]!.text === ')' && --depth === 0) break
      }
      if (['{', ':'].includes(tokens[m + 1]?.text ?? '')) return
    }
    found.push(`${file}:${t.line} uses the global fetch`)
  })
  return found
}

describe('layers: SQLite and the network each have one home', () => {
  test('SQL is written only in the store, the blob store and src/sqlite', () => {
    expect(
      sourceFiles()
        .filter(not(SQLITE_HOMES))
        .flatMap((f) => sqlIn(f)),
    ).toEqual([])
  })

  test('the global fetch is called only under src/fetch/', () => {
    expect(
      sourceFiles()
        .filter(not(in_('src/fetch/')))
        .flatMap((f) => globalFetches(f)),
    ).toEqual([])
  })
})

describe('the reader finds what it must, and the rules can fail', () => {
  test('imports of every form are read; ones in comments and strings are not', () => {
    const source = [
      "import type { Store } from '../store'",
      'import {',
      '  a,',
      '  type B,',
      "} from './multi'",
      "import './side-effect'",
      "import * as ns from 'elysia'",
      "export { x } from './re-export'",
      "export type { T } from './type-re-export'",
      "export * from './star'",
      "const lazy = await import('./lazy')",
      "type Lazy = typeof import('./type-lazy')",
      "// import { no } from './in-a-comment'",
      "/* import { no } from './in-a-block' */",
      'const text = "import { no } from \'./in-a-string\'"',
      "const tpl = `import('./in-a-template') ${'x'.length} import { no } from './also'`",
      "const re = /import('.\\/in-a-regex')/",
      'export { local }',
      "import last from './after-a-local-export'",
      'const m = import.meta.dir',
    ].join('\n')
    expect(importsOf(source).map((i) => i.specifier)).toEqual([
      '../store',
      './multi',
      './side-effect',
      'elysia',
      './re-export',
      './type-re-export',
      './star',
      './lazy',
      './type-lazy',
      './after-a-local-export',
    ])
  })

  test('the graph holds a known import, resolved to its file', () => {
    expect(edges).toContainEqual(expect.objectContaining({ file: 'src/store/db.ts', specifier: '../sqlite/wal', target: 'src/sqlite/wal.ts' }))
    expect(edges).toContainEqual(expect.objectContaining({ file: 'src/store/db.ts', specifier: 'bun:sqlite', target: 'bun:sqlite' }))
    expect(edges.length).toBeGreaterThan(500)
  })

  test('a breach is reported with its file, line and import', () => {
    const fake: Edge[] = [
      { file: 'src/store/jobs.ts', specifier: '../http/errors', target: 'src/http/errors.ts', line: 3 },
      { file: 'src/api/jobs.ts', specifier: '../http/errors', target: 'src/http/errors.ts', line: 4 },
      { file: 'src/parse/x.ts', specifier: 'bun:sqlite', target: 'bun:sqlite', line: 1 },
    ]
    expect(breaches(fake, RULES[0]!)).toEqual(["src/store/jobs.ts:3 imports '../http/errors' (src/http/errors.ts)"])
    expect(breaches(fake, RULES[RULES.length - 1]!)).toEqual(["src/parse/x.ts:1 imports 'bun:sqlite' (bun:sqlite)"])
  })

  test('SQL is told from words that only look like it', () => {
    const source = [
      "db.query('SELECT seq FROM runs WHERE id = ?')",
      'const sql = `INSERT INTO jobs (id) VALUES (?)`',
      "this.db.prepare('x')",
      "const method = 'DELETE'",
      "const note = 'select a file from the list'",
      'runner.run(seq)',
    ].join('\n')
    expect(sqlIn('x.ts', tokenize(source))).toEqual([
      'x.ts:1 calls db.query(',
      'x.ts:1 holds SQL: SELECT seq FROM runs WHERE id = ?',
      'x.ts:2 holds SQL: INSERT INTO jobs (id) VALUES (?)',
      'x.ts:3 calls db.prepare(',
    ])
  })

  test('global fetch uses are told from methods and properties of that name', () => {
    const source = [
      'const r = await fetch(url)',
      'const f: typeof fetch = fetch',
      'call(fetch)',
      'await fetcher.fetch(req)',
      'await this.deps?.fetch(req)',
      'const o = { fetch: handler }',
      'type O = { fetch?: typeof fetch }',
      'class A { private async fetch(req: R): Promise<X> { return 1 } }',
      'class B { fetch(req: R) { return 1 } }',
    ].join('\n')
    expect(globalFetches('x.ts', tokenize(source))).toEqual(['x.ts:1 uses the global fetch', 'x.ts:2 uses the global fetch', 'x.ts:3 uses the global fetch'])
  })
})
