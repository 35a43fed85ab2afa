import { openBlobStore } from '../blob'
import { ConfigError, loadConfig, tenantFlag } from '../config'
import { DomainError } from '../core/errors'
import { ParsePool } from '../parse/pool'
import { exportTarget, mainContentFlag, writeExport } from './export-output'
import { openExistingStore } from '../store/open'
import { isUuid } from '../core/formats'

const USAGE = 'trawl export RUN_ID [--format jsonl|llms] [-o FILE] [--out-dir DIR] [--main-content true|false] [--data-dir DIR] [--tenant T]'

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
  if (!isUuid(runId)) throw new ConfigError(`export: "${runId}" is not a run id (a uuid, as trawl crawl prints it)`)
  const target = exportTarget(flags, 'jsonl')!
  const mainContent = mainContentFlag(flags['main-content'])
  const tenant = tenantFlag(flags.tenant)

  const opened = await openExistingStore(config)
  if (!opened) {
    err.write(`trawl: no data dir at ${config.dataDir} (trawl crawl makes one; --data-dir names another)\n`)
    return 1
  }
  let blobs: ReturnType<typeof openBlobStore>
  try {
    blobs = openBlobStore(config, { s3Index: opened.s3Index })
  } catch (e) {
    await opened.close()
    throw e
  }
  const parser = new ParsePool(config.parseWorkers, config.parseTimeoutMs)
  try {
    await writeExport({ store: opened.store, blobs, parser }, tenant, runId, target, mainContent, out)
    return 0
  } catch (e) {
    if (!(e instanceof DomainError && e.code === 'not_found')) throw e
    err.write(`trawl: run ${runId} not found in ${opened.where} (tenant ${tenant})\n`)
    return 1
  } finally {
    parser.close()
    await blobs.close()
    await opened.close()
  }
}
