import { ConfigError, loadConfig } from '../config'
import { copyDataDir, type CopyReport } from '../store/copy'

const USAGE = 'trawl db copy --to postgres://user:password@host:port/database [--blobs s3://bucket/prefix] [--force] [--data-dir DIR]'

/**
 * `trawl db copy --to postgres://… [--blobs s3://bucket/prefix]`: the data dir's catalogue, runs
 * and history into an empty PostgreSQL database, and its bodies into S3, for a user who
 * outgrows one machine (docs/cluster.md). A line per table as it is copied, then a summary, on
 * stdout. Exit 0 when copied; 2 for what is refused before anything is written (a bad flag, no
 * data dir, a run being crawled, a database that cannot be reached or is not empty, bodies with
 * no S3 location); 1 when the copy fails on the way, which leaves the database as it was.
 */
export async function dbCommand(argv: string[], out: NodeJS.WritableStream = process.stdout, err: NodeJS.WritableStream = process.stderr): Promise<number> {
  const { config, positionals, flags } = loadConfig(argv, process.env, {
    to: { type: 'string' },
    blobs: { type: 'string' },
    force: { type: 'boolean' },
  })
  const [sub, ...rest] = positionals
  if (sub !== 'copy') throw new ConfigError(sub === undefined ? `db needs a subcommand: ${USAGE}` : `db: no subcommand "${sub}"; the one there is: ${USAGE}`)
  if (rest.length) throw new ConfigError(`db copy takes no arguments beside its flags, got "${rest[0]}": ${USAGE}`)
  const to = (flags.to as string | undefined)?.trim()
  if (!to) throw new ConfigError(`--to: needed, the PostgreSQL database to copy into: ${USAGE}`)
  const blobs = (flags.blobs as string | undefined)?.trim() || null

  let report: CopyReport
  try {
    report = await copyDataDir({ dataDir: config.dataDir, to, blobs, force: flags.force === true, blobUrl: config.blobUrl, s3Endpoint: config.s3Endpoint, env: process.env }, (what, n, done) =>
      out.write(`${what}: ${what === 'bodies' ? `${n.toLocaleString('en-US')} uploaded` : count(n, 'row')}${done ? '' : ' so far'}\n`),
    )
  } catch (e) {
    if (e instanceof ConfigError) throw e
    // The transaction was rolled back: the database is as the copy found it, and a second run may go ahead.
    err.write(`trawl: db copy failed, nothing was committed: ${(e as Error).message.split('\n')[0]}\n`)
    return 1
  }
  out.write(`${summary(config.dataDir, report)}\n`)
  return 0
}

const count = (n: number, one: string) => `${n.toLocaleString('en-US')} ${n === 1 ? one : one === 'body' ? 'bodies' : `${one}s`}`

function summary(dataDir: string, r: CopyReport): string {
  const b = r.blobs
  const parts = [`copied ${dataDir} to ${r.target}: ${count(r.rows, 'row')} in ${r.tables.length} tables`]
  if (b.to) parts.push(b.uploaded ? `${count(b.uploaded, 'body')} (${size(b.bytes)}) to ${b.to}` : `${count(b.indexRows, 'index row')} of the bodies already in ${b.to}`)
  if (b.missing) parts.push(`${count(b.missing, 'body')} named by artifacts not found in the data dir's blob store, and not copied`)
  if (r.nulCharacters) parts.push(`${count(r.nulCharacters, 'NUL character')} in text replaced by U+FFFD (PostgreSQL text cannot hold them)`)
  return `${parts.join('; ')}; ${(r.ms / 1000).toFixed(1)} s`
}

function size(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KiB`
  return `${(bytes / 1024 / 1024).toFixed(1)} MiB`
}
