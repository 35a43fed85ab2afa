import { createWriteStream, type WriteStream } from 'node:fs'
import { join } from 'node:path'
import { ConfigError } from '../config'
import { notFound } from '../core/errors'
import { exportPages, jsonlLine, llmsHeader, llmsSection, writeOutDir, type ExportDeps } from '../export'

/** Where a command writes a run's pages: JSONL or llms to a file or stdout, or a directory. */
export type ExportTarget = { kind: 'stream'; format: 'jsonl' | 'llms'; file: string | undefined } | { kind: 'dir'; dir: string }

/**
 * The `-o FILE` / `--out-dir DIR` / `--format` flags `trawl export` and `trawl crawl` share,
 * checked before anything runs (a crawl must not run for an hour and then refuse its output).
 * Null when none was given.
 */
export function exportTarget(flags: Record<string, unknown>, defaultFormat: 'jsonl' | null): ExportTarget | null {
  const file = flags.out as string | undefined
  const dir = flags['out-dir'] as string | undefined
  const format = flags.format as string | undefined
  if (dir !== undefined && (file !== undefined || format !== undefined)) throw new ConfigError('--out-dir writes a directory of markdown files: it takes neither -o nor --format')
  if (file === '' || dir === '') throw new ConfigError(`${file === '' ? '-o' : '--out-dir'}: needs a path`)
  if (format !== undefined && format !== 'jsonl' && format !== 'llms') throw new ConfigError(`--format: jsonl or llms, got "${format}"`)
  if (dir !== undefined) return { kind: 'dir', dir }
  if (file === undefined && format === undefined && defaultFormat === null) return null
  return { kind: 'stream', format: (format as 'jsonl' | 'llms' | undefined) ?? 'jsonl', file }
}

/** `--main-content true|false` (default true). */
export function mainContentFlag(raw: unknown): boolean {
  const value = (raw as string | undefined) ?? 'true'
  if (value !== 'true' && value !== 'false') throw new ConfigError(`--main-content: true or false, got "${value}"`)
  return value === 'true'
}

/** Writes text to a stream, waiting when it is full: an export can be far larger than memory. */
async function write(stream: NodeJS.WritableStream, text: string) {
  if (!stream.write(text)) await new Promise<void>((resolve) => stream.once('drain', () => resolve()))
}

/** A file to write the export to; a path that cannot be written is a usage error. */
function openFile(path: string): Promise<WriteStream> {
  const stream = createWriteStream(path)
  return new Promise((resolve, reject) => {
    stream.once('open', () => resolve(stream))
    stream.once('error', (e) => reject(new ConfigError(`-o: cannot write ${path}: ${e.message}`)))
  })
}

/**
 * Writes a run's pages to the target; a line saying where goes to `out` unless the pages
 * themselves went there. Throws a `not_found` DomainError for an unknown run, before writing.
 */
export async function writeExport(deps: ExportDeps, tenant: string, runId: string, target: ExportTarget, mainContent: boolean, out: NodeJS.WritableStream): Promise<void> {
  const run = await deps.store.runs.get(tenant, runId)
  if (!run) throw notFound('run')
  const pages = await exportPages(deps, tenant, runId, { main_content: mainContent, filters: {} })
  if (target.kind === 'dir') {
    const written = await writeOutDir(pages, target.dir)
    out.write(`exported ${written.pages} pages: ${written.files.length} markdown files and ${join(target.dir, 'index.md')}\n`)
    return
  }
  const sink = target.file === undefined ? out : await openFile(target.file)
  const line = target.format === 'llms' ? llmsSection : jsonlLine
  if (target.format === 'llms') await write(sink, llmsHeader(run))
  let count = 0
  for await (const page of pages) {
    count++
    const text = line(page)
    if (text) await write(sink, text)
  }
  if (sink !== out) {
    await new Promise<void>((resolve, reject) => (sink as WriteStream).end((e?: Error | null) => (e ? reject(e) : resolve())))
    out.write(`exported ${count} pages to ${target.file}\n`)
  }
}
