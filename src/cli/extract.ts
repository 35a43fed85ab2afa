import { Value } from '@sinclair/typebox/value'
import { readFileSync } from 'node:fs'
import { ConfigError, loadConfig, tenantFlag, type Config } from '../config'
import { applyToPage, fetchPage, PageRefused } from '../extract/apply-source'
import { checkDataMap, DataMapDef } from '../extract/data-map'
import { Fields } from '../extract/field-schema'
import { FetchError } from '../fetch/errors'
import { createFetcher } from '../fetch'
import { FETCH_TIMEOUT_MS } from '../fetch/options-schema'
import { FieldErrors, ValidationError } from '../core/errors'
import { isHttpUrl } from '../core/formats'
import { createLogger } from '../log'
import { ParsePool, ParseTimeout, PoolError } from '../parse/pool'
import { openExistingStore } from '../store/open'
import { isUuid } from '../core/formats'

/** The fetch API's bounds (in seconds) and default. */
const TIMEOUT_SECONDS = { min: FETCH_TIMEOUT_MS.min / 1000, max: FETCH_TIMEOUT_MS.max / 1000, default: 30 }
/** The id the one-step pipeline knows a fields file's map by; it names no stored map. */
const FILE_MAP_ID = '00000000-0000-0000-0000-000000000000'

/**
 * `trawl extract URL (--fields FILE | --data-map ID) [--timeout SECONDS] [--data-dir DIR]
 * [--tenant T]`: fetches one page as `POST /v1/data_maps/{id}/apply` does by `url` and prints
 * what the fields, or a stored data map, extract from it, as pretty JSON; each extraction error
 * is a line on stderr. A quick way to try selectors on a live page before a crawl uses them.
 * Exit 0 when the page was read (even with extraction errors), 1 when it could not be fetched
 * or read, 2 for bad arguments or a bad fields file. Private addresses are allowed, as for
 * every one-shot command.
 */
export async function extractCommand(argv: string[], out: NodeJS.WritableStream = process.stdout, err: NodeJS.WritableStream = process.stderr): Promise<number> {
  const { config, positionals, flags } = loadConfig(
    argv,
    { ...process.env, TRAWL_ALLOW_PRIVATE_NETWORKS: process.env.TRAWL_ALLOW_PRIVATE_NETWORKS ?? 'true' },
    {
      fields: { type: 'string' },
      'data-map': { type: 'string' },
      timeout: { type: 'string' },
      tenant: { type: 'string' },
    },
  )
  if (positionals.length !== 1) throw new ConfigError('extract takes one URL: trawl extract URL --fields FILE')
  const url = positionals[0]!
  if (!isHttpUrl(url)) throw new ConfigError(`extract: the URL must be an absolute http or https URL, got "${url}"`)
  const fieldsFile = flags.fields as string | undefined
  const mapId = flags['data-map'] as string | undefined
  if ((fieldsFile === undefined) === (mapId === undefined)) throw new ConfigError('extract needs one of --fields FILE and --data-map ID')
  const timeout = flags.timeout as string | undefined
  const seconds = timeout === undefined ? TIMEOUT_SECONDS.default : Number(timeout)
  if (timeout !== undefined && !(/^\d+(\.\d+)?$/.test(timeout) && seconds >= TIMEOUT_SECONDS.min && seconds <= TIMEOUT_SECONDS.max)) {
    throw new ConfigError(`--timeout: must be seconds from ${TIMEOUT_SECONDS.min} to ${TIMEOUT_SECONDS.max}, got "${timeout}"`)
  }
  const tenant = tenantFlag(flags.tenant)
  const [id, def] = fieldsFile !== undefined ? [FILE_MAP_ID, readDefinition(fieldsFile)] : [mapId!, await storedMap(config, tenant, mapId!)]

  const log = createLogger(config.logLevel === 'debug' ? 'debug' : 'warn')
  const fetcher = createFetcher(config, log)
  const parser = new ParsePool(1, config.parseTimeoutMs)
  try {
    const page = await fetchPage(fetcher, url, Math.round(seconds * 1000), '')
    const { data, errors } = await applyToPage(parser, page, id, def, '')
    out.write(`${JSON.stringify(data, null, 2)}\n`)
    for (const e of errors) err.write(`trawl extract: ${e.field}: ${e.message}\n`)
    return 0
  } catch (e) {
    if (e instanceof FetchError || e instanceof PageRefused) err.write(`trawl extract: ${e.code}: ${e.message}\n`)
    else if (e instanceof ParseTimeout || e instanceof PoolError) err.write(`trawl extract: parse_error: ${e.message}\n`)
    else throw e
    return 1
  } finally {
    parser.close()
    await fetcher.close()
  }
}

/**
 * A --fields file: a JSON list of fields (docs/extract.md, the scrape API's `json` format), or a
 * data map's `map` (`{"fields":[…],"item_selector":"…"}`) for one object per matched item.
 * Checked as the API checks them, the first problem reported.
 */
function readDefinition(path: string): DataMapDef {
  let parsed: unknown
  try {
    parsed = JSON.parse(readFileSync(path, 'utf8'))
  } catch (e) {
    throw new ConfigError(`--fields: cannot read ${path}: ${(e as Error).message}`)
  }
  const def = Array.isArray(parsed) ? { fields: parsed } : parsed
  const schema = Array.isArray(parsed) ? Fields : DataMapDef
  const checked = Array.isArray(parsed) ? parsed : def
  if (!Value.Check(schema, checked)) {
    const first = Value.Errors(schema, checked).First()
    throw new ConfigError(`--fields: ${path} is not a list of fields or a data map: ${first ? `${first.path || '/'} ${first.message}` : 'invalid'}`)
  }
  const errors = new FieldErrors()
  checkDataMap(def, 'map', errors)
  try {
    errors.throwIfAny()
  } catch (e) {
    const f = (e as ValidationError).fields[0]!
    throw new ConfigError(`--fields: ${f.field.replace(/^map\./, '')} ${f.errors[0]}`)
  }
  return def as DataMapDef
}

/** A stored data map of the tenant in the store; never creates a data dir that was not there. */
async function storedMap(config: Config, tenant: string, id: string): Promise<DataMapDef> {
  if (!isUuid(id)) throw new ConfigError(`--data-map: must be a uuid, got "${id}"`)
  const opened = await openExistingStore(config)
  if (!opened) throw new ConfigError(`--data-map: ${config.dataDir} has no trawl.db`)
  try {
    const map = await opened.store.dataMaps.get(tenant, id)
    if (!map) throw new ConfigError(`--data-map: tenant ${tenant} has no data map ${id} in ${opened.where}`)
    return map.map
  } finally {
    await opened.close()
  }
}
