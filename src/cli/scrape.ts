import { Value } from '@sinclair/typebox/value'
import { readFileSync } from 'node:fs'
import { ConfigError, loadConfig, RENDER_MODES, type RenderMode } from '../config'
import { Fields, type Field } from '../extract/field-schema'
import { checkFields } from '../extract/selectors'
import { createFetcher } from '../fetch'
import { FieldErrors } from '../core/errors'
import { createLogger } from '../log'
import { ParsePool } from '../parse/pool'
import { localeProblem, TIMEOUT_SECONDS, timeoutProblem, urlProblem, type Format } from '../scrape/schema'
import { ScrapeFailure, Scraper } from '../scrape/scraper'

const FORMATS = ['markdown', 'html', 'json'] as const
const BOOLEAN = ['true', 'false'] as const

/**
 * `trawl scrape URL [--format markdown|html|json] [--fields FILE] [--timeout SECONDS]
 * [--locale TAG] [--render auto|never|always] [--main-content true|false]`: one scrape in this process, no server, no payment (design.md §1). Prints the
 * markdown or HTML as it is, the extracted data as JSON, or the bytes of content that is not
 * text. Exit 0 on success, 1 when the target failed, 2 for bad arguments. Private addresses
 * are allowed, as for every one-shot command.
 */
export async function scrapeCommand(argv: string[], out: NodeJS.WriteStream = process.stdout, err: NodeJS.WriteStream = process.stderr): Promise<number> {
  const { config, positionals, flags } = loadConfig(
    argv,
    { ...process.env, TRAWL_ALLOW_PRIVATE_NETWORKS: process.env.TRAWL_ALLOW_PRIVATE_NETWORKS ?? 'true' },
    {
      format: { type: 'string' },
      fields: { type: 'string' },
      timeout: { type: 'string' },
      locale: { type: 'string' },
      render: { type: 'string' },
      'main-content': { type: 'string' },
    },
  )
  if (positionals.length !== 1) throw new ConfigError('scrape takes one URL: trawl scrape URL [--format markdown|html|json] [--fields FILE] [--render auto|never|always] [--main-content true|false]')
  const url = positionals[0]!
  const problem = urlProblem(url)
  if (problem) throw new ConfigError(`scrape: the URL ${problem}, got "${url}"`)
  const kind = (flags.format as string | undefined) ?? 'markdown'
  if (!(FORMATS as readonly string[]).includes(kind)) throw new ConfigError(`--format: must be one of ${FORMATS.join(', ')}, got "${kind}"`)
  const fieldsFile = flags.fields as string | undefined
  if (kind === 'json' && fieldsFile === undefined) throw new ConfigError('--format json needs --fields FILE (a JSON array of fields)')
  if (kind !== 'json' && fieldsFile !== undefined) throw new ConfigError('--fields goes with --format json')
  const format: Format = kind === 'json' ? { kind: 'json', fields: readFields(fieldsFile!) } : kind === 'html' ? { kind: 'html' } : { kind: 'markdown' }
  const timeout = flags.timeout as string | undefined
  const seconds = timeout === undefined ? TIMEOUT_SECONDS.default : Number(timeout)
  if (timeout !== undefined && timeoutProblem(timeout)) throw new ConfigError(`--timeout: must be seconds from ${TIMEOUT_SECONDS.min} to ${TIMEOUT_SECONDS.max}, got "${timeout}"`)
  const locale = (flags.locale as string | undefined) ?? null
  const localeError = locale === null ? null : localeProblem(locale)
  if (localeError) throw new ConfigError(`--locale: ${localeError}, got "${locale}"`)

  const render = (flags.render as string | undefined) ?? config.scrapeRender
  if (!(RENDER_MODES as readonly string[]).includes(render)) throw new ConfigError(`--render: must be one of ${RENDER_MODES.join(', ')}, got "${render}"`)
  const main = flags['main-content'] as string | undefined
  if (main !== undefined && !(BOOLEAN as readonly string[]).includes(main)) throw new ConfigError(`--main-content: must be true or false, got "${main}"`)
  if (main !== undefined && kind !== 'markdown') throw new ConfigError('--main-content goes with --format markdown')
  if (format.kind === 'markdown') format.main_content = main !== 'false'

  const log = createLogger(config.logLevel === 'debug' ? 'debug' : 'warn')
  const fetcher = createFetcher(config, log)
  const parser = new ParsePool(1, config.parseTimeoutMs)
  try {
    // --render stands in for TRAWL_SCRAPE_RENDER in this command only.
    const scraper = new Scraper({ fetcher, parser, config: { ...config, scrapeRender: render as RenderMode }, log })
    const result = await scraper.scrape({ url, formats: [format], proxy: null, timeoutMs: Math.round(seconds * 1000), locale })
    const r = result.results[0]!
    if (r.kind === 'binary') out.write(r.bytes)
    else if (r.kind === 'json') out.write(`${JSON.stringify(r.data, null, 2)}\n`)
    else out.write(r.content.endsWith('\n') ? r.content : `${r.content}\n`)
    if (r.kind === 'json' && r.errors.length) for (const e of r.errors) err.write(`trawl scrape: ${e.field}: ${e.message}\n`)
    return 0
  } catch (e) {
    if (!(e instanceof ScrapeFailure)) throw e
    err.write(`trawl scrape: ${e.code}: ${e.message}\n`)
    return 1
  } finally {
    parser.close()
    await fetcher.close()
  }
}

/** The fields of a --fields file: a JSON array in the Field syntax (docs/extract.md), checked as the API checks them. */
function readFields(path: string): Field[] {
  let parsed: unknown
  try {
    parsed = JSON.parse(readFileSync(path, 'utf8'))
  } catch (e) {
    throw new ConfigError(`--fields: cannot read ${path}: ${(e as Error).message}`)
  }
  const errors = new FieldErrors()
  if (Value.Check(Fields, parsed)) checkFields(parsed, 'fields', errors)
  else {
    const first = Value.Errors(Fields, parsed).First()
    throw new ConfigError(`--fields: ${path} is not a list of fields: ${first ? `${first.path || '/'} ${first.message}` : 'invalid'}`)
  }
  try {
    errors.throwIfAny()
  } catch (e) {
    const f = (e as { fields: { field: string; errors: string[] }[] }).fields[0]!
    throw new ConfigError(`--fields: ${f.field} ${f.errors[0]}`)
  }
  return parsed as Field[]
}
