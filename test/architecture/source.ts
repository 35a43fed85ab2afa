import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'

/**
 * A reader of TypeScript sources for the architecture tests: a tokenizer that knows comments,
 * strings, template literals and regular expressions well enough that an import written in a
 * comment or a string is not taken for one, and the module specifiers of every static import,
 * re-export and `import()`. TypeScript 7 ships no JavaScript API to ask instead.
 */

export const REPO = resolve(import.meta.dir, '../..')
export const SRC = join(REPO, 'src')

export type Token = { kind: 'name' | 'string' | 'template' | 'regex' | 'number' | 'punct'; text: string; line: number }

const KEYWORDS_BEFORE_EXPRESSION = new Set(['return', 'typeof', 'instanceof', 'in', 'of', 'new', 'delete', 'void', 'throw', 'case', 'do', 'else', 'yield', 'await'])

/** The tokens of a source; a string token's text is its value (escapes left as written). */
export function tokenize(source: string): Token[] {
  const tokens: Token[] = []
  // Each open template literal's count of braces opened inside its current `${`.
  const templates: number[] = []
  let i = 0
  let line = 1
  const n = source.length
  const push = (kind: Token['kind'], text: string, at: number) => tokens.push({ kind, text, line: at })
  const regexAllowed = () => {
    const last = tokens[tokens.length - 1]
    if (!last) return true
    if (last.kind === 'name') return KEYWORDS_BEFORE_EXPRESSION.has(last.text)
    if (last.kind === 'punct') return ![')', ']', '}'].includes(last.text)
    return false
  }
  // Reads a template literal's text from i (just after ` or }) to its end or to `${`.
  const templateChunk = () => {
    const start = i
    const at = line
    while (i < n) {
      const c = source[i]!
      if (c === '\\') {
        i += 2
        continue
      }
      if (c === '\n') line++
      if (c === '`') {
        push('template', source.slice(start, i), at)
        i++
        return
      }
      if (c === '$' && source[i + 1] === '{') {
        push('template', source.slice(start, i), at)
        i += 2
        templates.push(0)
        return
      }
      i++
    }
    throw new Error(`unterminated template literal from line ${at}`)
  }
  while (i < n) {
    const c = source[i]!
    if (c === '\n') {
      line++
      i++
      continue
    }
    if (c === ' ' || c === '\t' || c === '\r') {
      i++
      continue
    }
    if (c === '/' && source[i + 1] === '/') {
      while (i < n && source[i] !== '\n') i++
      continue
    }
    if (c === '/' && source[i + 1] === '*') {
      const end = source.indexOf('*/', i + 2)
      if (end < 0) throw new Error(`unterminated comment from line ${line}`)
      for (let k = i; k < end; k++) if (source[k] === '\n') line++
      i = end + 2
      continue
    }
    if (c === "'" || c === '"') {
      const start = ++i
      while (i < n && source[i] !== c) {
        if (source[i] === '\\') i++
        else if (source[i] === '\n') throw new Error(`unterminated string on line ${line}`)
        i++
      }
      push('string', source.slice(start, i), line)
      i++
      continue
    }
    if (c === '`') {
      i++
      templateChunk()
      continue
    }
    if (c === '}' && templates.length > 0 && templates[templates.length - 1] === 0) {
      templates.pop()
      i++
      templateChunk()
      continue
    }
    if (c === '/' && regexAllowed()) {
      // A regular expression runs to the first unescaped / outside a class, on this line.
      let k = i + 1
      let inClass = false
      while (k < n && source[k] !== '\n') {
        const d = source[k]!
        if (d === '\\') k++
        else if (d === '[') inClass = true
        else if (d === ']') inClass = false
        else if (d === '/' && !inClass) break
        k++
      }
      if (source[k] === '/') {
        k++
        while (k < n && /[a-z]/.test(source[k]!)) k++
        push('regex', source.slice(i, k), line)
        i = k
        continue
      }
    }
    if (/[A-Za-z_$]/.test(c)) {
      const start = i
      while (i < n && /[\w$]/.test(source[i]!)) i++
      push('name', source.slice(start, i), line)
      continue
    }
    if (/[0-9]/.test(c)) {
      const start = i
      while (i < n && /[\w.]/.test(source[i]!)) i++
      push('number', source.slice(start, i), line)
      continue
    }
    if (templates.length > 0) {
      if (c === '{') templates[templates.length - 1]!++
      if (c === '}') templates[templates.length - 1]!--
    }
    // `?.` and `...` stay one token, so a property after them is seen as one.
    const three = source.slice(i, i + 3)
    const two = source.slice(i, i + 2)
    const op = three === '...' ? three : two === '?.' || two === '=>' ? two : c
    push('punct', op, line)
    i += op.length
  }
  return tokens
}

export type Import = { specifier: string; line: number; kind: 'static' | 'dynamic' }

/**
 * The module specifiers a source imports: `import … from`, `import '…'`, `export … from`
 * (types included: a type import ties the layers as much as any) and `import('…')`.
 */
export function importsOf(source: string): Import[] {
  const tokens = tokenize(source)
  const out: Import[] = []
  const isDot = (k: number) => tokens[k]?.kind === 'punct' && (tokens[k]!.text === '.' || tokens[k]!.text === '?.')
  for (let k = 0; k < tokens.length; k++) {
    const t = tokens[k]!
    if (t.kind !== 'name' || (t.text !== 'import' && t.text !== 'export') || isDot(k - 1)) continue
    const next = tokens[k + 1]
    if (!next) continue
    if (t.text === 'import' && next.text === '(' && tokens[k + 2]?.kind === 'string') {
      out.push({ specifier: tokens[k + 2]!.text, line: t.line, kind: 'dynamic' })
      continue
    }
    if (t.text === 'import' && next.kind === 'string') {
      out.push({ specifier: next.text, line: t.line, kind: 'static' })
      continue
    }
    // The clause between import/export and `from`: names, braces, commas, `*`, `as`, `type`.
    if (t.text === 'export' && !(next.text === '{' || next.text === '*' || (next.text === 'type' && ['{', '*'].includes(tokens[k + 2]?.text ?? '')))) continue
    let m = k + 1
    const clause = (tok: Token) => (tok.kind === 'name' && !['from', 'import', 'export'].includes(tok.text)) || ['{', '}', ',', '*'].includes(tok.text)
    while (m < tokens.length && clause(tokens[m]!)) m++
    if (tokens[m]?.text === 'from' && tokens[m + 1]?.kind === 'string') out.push({ specifier: tokens[m + 1]!.text, line: t.line, kind: 'static' })
  }
  return out
}

/** Every .ts file under a directory, as paths relative to the repository, sorted. */
export function sourceFiles(dir = SRC): string[] {
  const out: string[] = []
  const walk = (d: string) => {
    for (const name of readdirSync(d).sort()) {
      const path = join(d, name)
      if (statSync(path).isDirectory()) walk(path)
      else if (name.endsWith('.ts')) out.push(relative(REPO, path))
    }
  }
  walk(dir)
  return out
}

/** A relative specifier as a repository path (`src/core/url.ts`); any other as it is (`bun:sqlite`, `elysia`). */
export function resolveSpecifier(file: string, specifier: string): string {
  if (!specifier.startsWith('.')) return specifier
  const base = resolve(REPO, dirname(file), specifier)
  for (const candidate of [base, `${base}.ts`, join(base, 'index.ts')]) {
    if (existsSync(candidate) && statSync(candidate).isFile()) return relative(REPO, candidate)
  }
  return relative(REPO, base)
}

export type Edge = { file: string; specifier: string; target: string; line: number }

/** Every import of every .ts file under src/, resolved. */
export function importGraph(): Edge[] {
  const edges: Edge[] = []
  for (const file of sourceFiles()) {
    for (const imp of importsOf(readFileSync(join(REPO, file), 'utf8'))) edges.push({ file, specifier: imp.specifier, target: resolveSpecifier(file, imp.specifier), line: imp.line })
  }
  return edges
}

export const readSource = (file: string) => readFileSync(join(REPO, file), 'utf8')
