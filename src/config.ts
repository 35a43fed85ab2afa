import { parseArgs } from 'node:util'
import { parseDuration } from './util/duration'

/**
 * Settings (design.md §1; docs/configuration.md): flags > environment (TRAWL_*) > defaults.
 * These names are public interface. Every default lives here; a bad value is a ConfigError
 * naming the setting.
 */
export type Config = {
  dataDir: string
  host: string
  port: number
  scrapePort: number
  maxActiveRuns: number
  allowPrivateNetworks: boolean
  proxies: Record<string, string>
  chromium: string
  blobUrl: string | null
  s3Endpoint: string | null
  payTo: string | null
  payNetwork: 'base-sepolia' | 'base'
  price: string
  payMaxTimeoutMs: number
  facilitatorUrl: string | null
  publicUrl: string | null
  scrapeRate: number | null
  scrapeRender: 'auto' | 'never' | 'always'
  maxBodyBytes: number
  logLevel: LogLevel
  /** Largest request body the management API reads (not a public setting). */
  maxRequestBytes: number
  /** Parse worker threads: one per core, at most 4 (not a public setting). */
  parseWorkers: number
  /** A document that takes longer to parse is abandoned (not a public setting). */
  parseTimeoutMs: number
}
export type LogLevel = 'debug' | 'info' | 'warn' | 'error'

export class ConfigError extends Error {}

/** The ports could not be bound: an operator error, reported in one line. */
export class ListenError extends Error {}

/** A flag with its environment variable; `flag` null when the setting is environment-only. */
type Setting = { flag: string | null; env: string; fallback: string; parse: (raw: string, name: string) => unknown; key: keyof Config }

const fail = (name: string, what: string): never => {
  throw new ConfigError(`${name}: ${what}`)
}
const port = (raw: string, name: string) => {
  const n = Number(raw)
  return /^\d+$/.test(raw) && n <= 65535 ? n : fail(name, `must be a port number 0..65535, got "${raw}"`)
}
const positiveInt = (max: number) => (raw: string, name: string) => {
  const n = Number(raw)
  return /^\d+$/.test(raw) && n >= 1 && n <= max ? n : fail(name, `must be a whole number 1..${max}, got "${raw}"`)
}
const bool = (raw: string, name: string) =>
  /^(true|1|yes)$/i.test(raw) ? true : /^(false|0|no)$/i.test(raw) ? false : fail(name, `must be true or false, got "${raw}"`)
const oneOf =
  <T extends string>(...values: T[]) =>
  (raw: string, name: string) =>
    values.includes(raw as T) ? raw : fail(name, `must be one of ${values.join(', ')}, got "${raw}"`)
const optional = (raw: string) => (raw === '' ? null : raw)
const httpUrl = (raw: string, name: string) => {
  if (raw === '') return null
  try {
    const u = new URL(raw)
    if (u.protocol === 'http:' || u.protocol === 'https:') return raw.replace(/\/+$/, '')
  } catch {}
  return fail(name, `must be an http(s) URL, got "${raw}"`)
}
const proxies = (raw: string, name: string) => {
  const out: Record<string, string> = {}
  for (const entry of raw.split(',').map((s) => s.trim()).filter(Boolean)) {
    const eq = entry.indexOf('=')
    const key = entry.slice(0, eq).trim()
    const url = entry.slice(eq + 1).trim()
    if (eq < 1 || !/^[A-Za-z0-9_-]{1,64}$/.test(key)) fail(name, `entries must be name=url, got "${entry}"`)
    try {
      if (!/^(http|https):$/.test(new URL(url).protocol)) throw new Error()
    } catch {
      fail(name, `proxy "${key}" must be an http or https URL (Bun's fetch speaks no SOCKS), got "${url}"`)
    }
    out[key] = url
  }
  return out
}
const blobUrl = (raw: string) => {
  if (raw === '') return null
  parseBlobUrl(raw) // checked at start-up rather than when the store opens
  return raw
}

/** Where blobs go in S3: the bucket, and the prefix put before every key (`''` or ending in `/`). */
export type S3Location = { bucket: string; prefix: string }

/** Splits `s3://bucket/prefix` (TRAWL_BLOB_URL) into bucket and key prefix; a ConfigError for what S3 cannot take. */
export function parseBlobUrl(url: string): S3Location {
  // A bucket name as S3 has them: 3-63 lowercase letters, digits, dots and hyphens.
  const m = /^s3:\/\/([a-z0-9][a-z0-9.-]{1,61}[a-z0-9])(?:\/(.*))?$/.exec(url)
  if (!m) throw new ConfigError(`TRAWL_BLOB_URL: must be s3://bucket/prefix, got "${url}"`)
  // `s3://bkt/crawls` and `s3://bkt/crawls/` name one folder; keys go below it, never beside it.
  const path = (m[2] ?? '').replace(/^\/+|\/+$/g, '')
  // S3 clients resolve dot segments: `s3://bkt/../other` would write into another bucket.
  if (path.split('/').some((s) => s === '.' || s === '..')) throw new ConfigError(`TRAWL_BLOB_URL: the prefix must not contain . or .. segments, got "${url}"`)
  return { bucket: m[1]!, prefix: path ? `${path}/` : '' }
}
const payTo = (raw: string, name: string) =>
  raw === '' ? null : /^0x[0-9a-fA-F]{40}$/.test(raw) ? raw : fail(name, `must be a 0x-prefixed 20-byte address, got "${raw}"`)
const price = (raw: string, name: string) =>
  /^\$?(\d+(\.\d{1,6})?|\.\d{1,6})$/.test(raw) && Number(raw.replace('$', '')) > 0 ? raw.replace('$', '') : fail(name, `must be a USD amount like $0.001, got "${raw}"`)
const duration = (raw: string, name: string) => parseDuration(raw) ?? fail(name, `must be a duration like 300s or 1h, got "${raw}"`)
const rate = (raw: string, name: string) => {
  if (raw === 'off') return null
  const m = /^(\d+(\.\d+)?)\/s$/.exec(raw)
  return m && Number(m[1]) > 0 ? Number(m[1]) : fail(name, `must be N/s or off, got "${raw}"`)
}

const SETTINGS: Setting[] = [
  { flag: 'data-dir', env: 'TRAWL_DATA_DIR', fallback: './trawl-data', parse: (raw, name) => raw || fail(name, 'must not be empty'), key: 'dataDir' },
  { flag: 'host', env: 'TRAWL_HOST', fallback: '127.0.0.1', parse: (raw, name) => raw || fail(name, 'must not be empty'), key: 'host' },
  { flag: 'port', env: 'TRAWL_PORT', fallback: '8080', parse: port, key: 'port' },
  { flag: 'scrape-port', env: 'TRAWL_SCRAPE_PORT', fallback: '8081', parse: port, key: 'scrapePort' },
  { flag: null, env: 'TRAWL_MAX_ACTIVE_RUNS', fallback: '4', parse: positiveInt(1000), key: 'maxActiveRuns' },
  { flag: null, env: 'TRAWL_ALLOW_PRIVATE_NETWORKS', fallback: 'false', parse: bool, key: 'allowPrivateNetworks' },
  { flag: null, env: 'TRAWL_PROXIES', fallback: '', parse: proxies, key: 'proxies' },
  { flag: null, env: 'TRAWL_CHROMIUM', fallback: 'chromium', parse: (raw) => raw || 'chromium', key: 'chromium' },
  { flag: null, env: 'TRAWL_BLOB_URL', fallback: '', parse: blobUrl, key: 'blobUrl' },
  { flag: null, env: 'TRAWL_S3_ENDPOINT', fallback: '', parse: httpUrl, key: 's3Endpoint' },
  { flag: null, env: 'TRAWL_PAY_TO', fallback: '', parse: payTo, key: 'payTo' },
  { flag: null, env: 'TRAWL_PAY_NETWORK', fallback: 'base-sepolia', parse: oneOf('base-sepolia', 'base'), key: 'payNetwork' },
  { flag: null, env: 'TRAWL_PRICE', fallback: '$0.001', parse: price, key: 'price' },
  { flag: null, env: 'TRAWL_PAY_MAX_TIMEOUT', fallback: '300s', parse: duration, key: 'payMaxTimeoutMs' },
  { flag: null, env: 'TRAWL_FACILITATOR_URL', fallback: '', parse: httpUrl, key: 'facilitatorUrl' },
  { flag: null, env: 'TRAWL_PUBLIC_URL', fallback: '', parse: httpUrl, key: 'publicUrl' },
  { flag: null, env: 'TRAWL_SCRAPE_RATE', fallback: '20/s', parse: rate, key: 'scrapeRate' },
  { flag: null, env: 'TRAWL_SCRAPE_RENDER', fallback: 'auto', parse: oneOf('auto', 'never', 'always'), key: 'scrapeRender' },
  { flag: null, env: 'TRAWL_MAX_BODY_BYTES', fallback: '10485760', parse: positiveInt(1_073_741_824), key: 'maxBodyBytes' },
  { flag: null, env: 'TRAWL_LOG_LEVEL', fallback: 'info', parse: oneOf('debug', 'info', 'warn', 'error'), key: 'logLevel' },
]

/** Flags each command accepts beside the settings' own. */
export type FlagSpec = Record<string, { type: 'string' | 'boolean'; short?: string }>

/**
 * Loads the configuration from argv (after the command word) and an environment.
 * Answers the config and the positional arguments and extra flags the command declared.
 */
export function loadConfig(
  argv: string[],
  env: Record<string, string | undefined>,
  extra: FlagSpec = {},
): { config: Config; positionals: string[]; flags: Record<string, string | boolean | undefined> } {
  const options: FlagSpec = { ...extra }
  for (const s of SETTINGS) if (s.flag) options[s.flag] = { type: 'string' }
  let parsed: ReturnType<typeof parseArgs>
  try {
    parsed = parseArgs({ args: argv, options, allowPositionals: true, strict: true })
  } catch (err) {
    // node's messages run on ("… To specify a positional argument …"); keep the first sentence.
    throw new ConfigError((err as Error).message.split(/\.\s|\n/)[0]!.replace(/^Unknown option/, 'unknown flag'))
  }
  const values = parsed.values as Record<string, string | boolean | undefined>
  const config = {
    maxRequestBytes: 64 * 1024 * 1024,
    parseWorkers: Math.max(1, Math.min(4, navigator.hardwareConcurrency)),
    parseTimeoutMs: 60_000,
  } as Record<keyof Config, unknown>
  for (const s of SETTINGS) {
    const fromFlag = s.flag ? values[s.flag] : undefined
    const name = fromFlag !== undefined ? `--${s.flag}` : env[s.env] !== undefined ? s.env : `${s.env} (default)`
    const raw = typeof fromFlag === 'string' ? fromFlag : (env[s.env] ?? s.fallback)
    config[s.key] = s.parse(raw.trim(), name)
  }
  const flags = Object.fromEntries(Object.keys(extra).map((k) => [k, values[k]]))
  return { config: config as Config, positionals: parsed.positionals, flags }
}

/** The names of the settings, for usage text and docs. */
export const SETTING_NAMES = SETTINGS.map((s) => ({ flag: s.flag ? `--${s.flag}` : null, env: s.env, default: s.fallback }))
