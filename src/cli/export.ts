import { createWriteStream, existsSync, type WriteStream } from 'node:fs'
import { join } from 'node:path'
import { openBlobStore } from '../blob'
import { ConfigError, loadConfig } from '../config'
import { exportPages, jsonlLine, llmsHeader, llmsSection, writeOutDir, type PageRecord } from '../export'
import { ApiError } from '../http/errors'
import { ParsePool } from '../parse/pool'
import { createStore } from '../store'
import { openDatabase } from '../store/db'

const TENANT_PATTERN = /^[A-Za-z0-9._:-]{1,128}$/
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i
const USAGE = 'trawl export RUN_ID [--format jsonl|llms] [-o FILE] [--out-dir DIR] [--main-content true|false] [--data-dir DIR] [--tenant T]'

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
 * `trawl export RUN_ID`: a run of the local data dir as JSONL (default, to stdout or `-o FILE`),
 * as one markdown document (`--format llms`), or as a directory of markdown files with an index
 * (`--out-dir DIR`). Exit 0 when exported, 1 when the run or the data dir does not exist, 2 for
 * a usage error.
 */
export async function exportCommand(argv: string[], out: NodeJS.WriteStream = process.stdout, err: NodeJS.WriteStream = process.stderr): Promise<number> {
  const { config, positionals, flags } = loadConfig(argv, process.env, {
    format: { type: 'string' },
    out: { type: 'string', short: 'o' },
    'out-dir': { type: 'string' },
    'main-content': { type: 'string' },
    tenant: { type: 'string' },
  })
  if (positionals.length !== 1) throw new ConfigError(`export takes one run id: ${USAGE}`)
  const runId = positionals[0]!
  if (!UUID.test(runId)) throw new ConfigError(`export: "${runId}" is not a run id (a uuid, as trawl crawl prints it)`)
  const format = (flags.format as string | undefined) ?? 'jsonl'
  if (format !== 'jsonl' && format !== 'llms') throw new ConfigError(`--format: jsonl or llms, got "${format}"`)
  const file = flags.out as string | undefined
  const outDir = flags['out-dir'] as string | undefined
  if (outDir !== undefined && (file !== undefined || flags.format !== undefined)) throw new ConfigError('--out-dir writes a directory of markdown files: it takes neither -o nor --format')
  if (file === '' || outDir === '') throw new ConfigError(`${file === '' ? '-o' : '--out-dir'}: needs a path`)
  const main = (flags['main-content'] as string | undefined) ?? 'true'
  if (main !== 'true' && main !== 'false') throw new ConfigError(`--main-content: true or false, got "${main}"`)
  const tenant = (flags.tenant as string | undefined) ?? 'local'
  if (!TENANT_PATTERN.test(tenant)) throw new ConfigError(`--tenant: must be 1..128 of A-Z a-z 0-9 . _ : -, got "${tenant}"`)

  if (!existsSync(join(config.dataDir, 'trawl.db'))) {
    err.write(`trawl: no data dir at ${config.dataDir} (trawl crawl makes one; --data-dir names another)\n`)
    return 1
  }
  const db = openDatabase(config.dataDir)
  const store = createStore(db)
  const blobs = openBlobStore(config)
  const parser = new ParsePool(config.parseWorkers, config.parseTimeoutMs)
  try {
    let pages: AsyncGenerator<PageRecord>
    try {
      pages = exportPages({ store, blobs, parser }, tenant, runId, { main_content: main === 'true', filters: {} })
    } catch (e) {
      if (!(e instanceof ApiError && e.status === 404)) throw e
      err.write(`trawl: run ${runId} not found in ${config.dataDir} (tenant ${tenant})\n`)
      return 1
    }
    if (outDir !== undefined) {
      const written = await writeOutDir(pages, outDir)
      out.write(`exported ${written.pages} pages: ${written.files.length} markdown files and ${join(outDir, 'index.md')}\n`)
      return 0
    }
    const sink = file === undefined ? out : await openFile(file)
    const run = store.runs.get(tenant, runId)!
    const line = format === 'llms' ? llmsSection : jsonlLine
    if (format === 'llms') await write(sink, llmsHeader({ id: run.id, seeds: (run.config.seeds as string[] | undefined) ?? [] }))
    let count = 0
    for await (const page of pages) {
      count++
      const text = line(page)
      if (text) await write(sink, text)
    }
    if (sink !== out) {
      await new Promise<void>((resolve, reject) => (sink as WriteStream).end((e?: Error | null) => (e ? reject(e) : resolve())))
      out.write(`exported ${count} pages to ${file}\n`)
    }
    return 0
  } finally {
    parser.close()
    await blobs.close()
    db.close()
  }
}
