import { parseArgs } from 'node:util'
import { TENANT_PATTERN } from './core/tenant'
import { parseDuration } from './util/duration'
import { nearest } from './util/nearest'

/**
 * Settings (design.md §1; docs/configuration.md): flags > environment (TRAWL_*) > defaults.
 * These names are public interface. Every default lives here; a bad value is a ConfigError
 * naming the setting.
 */
export type Config = {
  dataDir: string
  /** The PostgreSQL database the store is in; null for the SQLite database of the data dir. */
  databaseUrl: string | null
  host: string
  port: number
  scrapePort: number
  /** The port /metrics is served on by itself; null: on the management port. */
  metricsPort: number | null
  /** Whether the pages and runs metrics carry a `tenant` label. */
  metricsTenants: boolean
  maxActiveRuns: number
  hostCeiling: number
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
  scrapeRender: RenderMode
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

/** When a scrape renders a page with Chromium (TRAWL_SCRAPE_RENDER, `trawl scrape --render`, the MCP tools' `render`). */
export const RENDER_MODES = ['auto', 'never', 'always'] as const
export type RenderMode = (typeof RENDER_MODES)[number]

export class ConfigError extends Error {}

/** The ports could not be bound: an operator error, reported in one line. */
export class ListenError extends Error {}

/**
 * A flag with its environment variable; `flag` null when the setting is environment-only.
 * `value` names the flag's argument in help, `says` is what `trawl help` tells a person.
 */
type Setting = { flag: string | null; value?: string; env: string; fallback: string; parse: (raw: string, name: string) => unknown; key: keyof Config; says: string }

const fail = (name: string, what: string): never => {
  throw new ConfigError(`${name}: ${what}`)
}
const port = (raw: string, name: string) => {
  const n = Number(raw)
  return /^\d+$/.test(raw) && n <= 65535 ? n : fail(name, `must be a port number 0..65535, got "${raw}"`)
}
const optionalPort = (raw: string, name: string) => (raw === '' ? null : port(raw, name))
const positiveInt = (max: number) => (raw: string, name: string) => {
  const n = Number(raw)
  return /^\d+$/.test(raw) && n >= 1 && n <= max ? n : fail(name, `must be a whole number 1..${max}, got "${raw}"`)
}
const bool = (raw: string, name: string) => (/^(true|1|yes)$/i.test(raw) ? true : /^(false|0|no)$/i.test(raw) ? false : fail(name, `must be true or false, got "${raw}"`))
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
  for (const entry of raw
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)) {
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
/** `scheme://user:secret@…` with the secret hidden: a database URL is never printed with its password. */
export function withoutPassword(url: string): string {
  // Up to the last @ of the authority: a password may hold an unencoded @.
  return url.replace(/^([a-z][a-z0-9+.-]*:\/\/[^:@/?#]*:)[^/?#]*@/i, '$1***@')
}
const databaseUrl = (raw: string, name: string) => {
  if (raw === '') return null
  let ok = false
  try {
    ok = /^postgres(ql)?:$/.test(new URL(raw).protocol) && /^postgres(ql)?:\/\//i.test(raw)
  } catch {}
  return ok ? raw : fail(name, `must be a postgres:// or postgresql:// URL, or empty for SQLite in the data dir, got "${withoutPassword(raw)}"`)
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
const payTo = (raw: string, name: string) => (raw === '' ? null : /^0x[0-9a-fA-F]{40}$/.test(raw) ? raw : fail(name, `must be a 0x-prefixed 20-byte address, got "${raw}"`))
const price = (raw: string, name: string) =>
  /^\$?(\d+(\.\d{1,6})?|\.\d{1,6})$/.test(raw) && Number(raw.replace('$', '')) > 0 ? raw.replace('$', '') : fail(name, `must be a USD amount like $0.001, got "${raw}"`)
const duration = (raw: string, name: string) => parseDuration(raw) ?? fail(name, `must be a duration like 300s or 1h, got "${raw}"`)
const rate = (raw: string, name: string) => {
  if (raw === 'off') return null
  const m = /^(\d+(\.\d+)?)\/s$/.exec(raw)
  return m && Number(m[1]) > 0 ? Number(m[1]) : fail(name, `must be N/s or off, got "${raw}"`)
}

const SETTINGS: Setting[] = [
  {
    flag: 'data-dir',
    value: 'DIR',
    env: 'TRAWL_DATA_DIR',
    fallback: './trawl-data',
    parse: (raw, name) => raw || fail(name, 'must not be empty'),
    key: 'dataDir',
    says: 'Directory for the SQLite database, the artifact bodies and the fetch journal; created if missing.',
  },
  {
    flag: 'database-url',
    value: 'URL',
    env: 'TRAWL_DATABASE_URL',
    fallback: '',
    parse: databaseUrl,
    key: 'databaseUrl',
    says: 'postgres://user:password@host/db keeps the store in PostgreSQL (bodies then go to S3: TRAWL_BLOB_URL); unset, SQLite in the data dir.',
  },
  {
    flag: 'host',
    value: 'ADDR',
    env: 'TRAWL_HOST',
    fallback: '127.0.0.1',
    parse: (raw, name) => raw || fail(name, 'must not be empty'),
    key: 'host',
    says: 'Address both HTTP ports listen on; 0.0.0.0 or :: for every interface.',
  },
  { flag: 'port', value: 'N', env: 'TRAWL_PORT', fallback: '8080', parse: port, key: 'port', says: 'Port of the management API; 0 picks a free one.' },
  { flag: 'scrape-port', value: 'N', env: 'TRAWL_SCRAPE_PORT', fallback: '8081', parse: port, key: 'scrapePort', says: 'Port of the scrape API; 0 picks a free one.' },
  {
    flag: 'metrics-port',
    value: 'N',
    env: 'TRAWL_METRICS_PORT',
    fallback: '',
    parse: optionalPort,
    key: 'metricsPort',
    says: 'Serve the Prometheus /metrics on this port (same host) instead of the management port, which then answers 404 there; 0 picks a free one.',
  },
  {
    flag: null,
    env: 'TRAWL_METRICS_TENANTS',
    fallback: 'false',
    parse: bool,
    key: 'metricsTenants',
    says: 'Label the pages and runs metrics of /metrics with their tenant (off: tenant names never reach the metrics).',
  },
  { flag: null, env: 'TRAWL_MAX_ACTIVE_RUNS', fallback: '4', parse: positiveInt(1000), key: 'maxActiveRuns', says: 'How many runs one server crawls at once; the others wait their turn.' },
  {
    flag: null,
    env: 'TRAWL_HOST_CEILING',
    fallback: '16',
    parse: positiveInt(64),
    key: 'hostCeiling',
    says: "Most requests in flight to one host over every run (and, on PostgreSQL, every process): two jobs on one site share it. 16 is a run's default concurrency: all runs on a host send no more than one run sends to all its hosts.",
  },
  {
    flag: null,
    env: 'TRAWL_ALLOW_PRIVATE_NETWORKS',
    fallback: 'false',
    parse: bool,
    key: 'allowPrivateNetworks',
    says: 'Allow fetches of loopback, private and cloud-metadata addresses (trawl crawl, scrape, extract and mcp allow them unless this is set).',
  },
  { flag: null, env: 'TRAWL_PROXIES', fallback: '', parse: proxies, key: 'proxies', says: 'Named proxies a fetch or a job may use: name=url,name=url (http or https).' },
  {
    flag: null,
    env: 'TRAWL_CHROMIUM',
    fallback: 'chromium',
    parse: (raw) => raw || 'chromium',
    key: 'chromium',
    says: 'The Chromium executable that renders pages for the browser client and the scrape API.',
  },
  { flag: null, env: 'TRAWL_BLOB_URL', fallback: '', parse: blobUrl, key: 'blobUrl', says: 's3://bucket/prefix keeps artifact bodies in S3 instead of the data dir.' },
  { flag: null, env: 'TRAWL_S3_ENDPOINT', fallback: '', parse: httpUrl, key: 's3Endpoint', says: 'An S3-compatible server (MinIO, R2, ...) to use instead of AWS.' },
  { flag: null, env: 'TRAWL_PAY_TO', fallback: '', parse: payTo, key: 'payTo', says: 'Address that receives x402 payments; unset, the scrape API is free.' },
  { flag: null, env: 'TRAWL_PAY_NETWORK', fallback: 'base-sepolia', parse: oneOf('base-sepolia', 'base'), key: 'payNetwork', says: 'Chain the scrape API is paid on: base-sepolia (testnet) or base.' },
  { flag: null, env: 'TRAWL_PRICE', fallback: '$0.001', parse: price, key: 'price', says: 'USD price of one scrape request, paid in USDC.' },
  { flag: null, env: 'TRAWL_PAY_MAX_TIMEOUT', fallback: '300s', parse: duration, key: 'payMaxTimeoutMs', says: 'How long a payment authorization stays valid.' },
  {
    flag: null,
    env: 'TRAWL_FACILITATOR_URL',
    fallback: '',
    parse: httpUrl,
    key: 'facilitatorUrl',
    says: 'x402 facilitator that verifies and settles payments; unset, they wait in the ledger (trawl payments).',
  },
  { flag: null, env: 'TRAWL_PUBLIC_URL', fallback: '', parse: httpUrl, key: 'publicUrl', says: 'Public base URL of the scrape API, for payment challenges behind a reverse proxy.' },
  { flag: null, env: 'TRAWL_SCRAPE_RATE', fallback: '20/s', parse: rate, key: 'scrapeRate', says: 'Scrape requests allowed per payer (per client address before payment), as N/s, or off.' },
  {
    flag: null,
    env: 'TRAWL_SCRAPE_RENDER',
    fallback: 'auto',
    parse: oneOf(...RENDER_MODES),
    key: 'scrapeRender',
    says: 'When the scrape API renders a page with Chromium: auto (only pages that need script), never or always.',
  },
  {
    flag: null,
    env: 'TRAWL_MAX_BODY_BYTES',
    fallback: '10485760',
    parse: positiveInt(1_073_741_824),
    key: 'maxBodyBytes',
    says: 'Largest response body /v1/fetch, the scrape API and data-map apply read, in bytes.',
  },
  {
    flag: null,
    env: 'TRAWL_LOG_LEVEL',
    fallback: 'info',
    parse: oneOf('debug', 'info', 'warn', 'error'),
    key: 'logLevel',
    says: 'Least severe log line written to stderr: debug, info, warn or error.',
  },
]

/** Flags each command accepts beside the settings' own. */
export type FlagSpec = Record<string, { type: 'string' | 'boolean'; short?: string; multiple?: boolean }>

/**
 * The command this process runs, told by main before it dispatches: loadConfig names it in its
 * errors and accepts only the setting flags it lists (`trawl scrape --port 1` is an error, not
 * a flag quietly ignored). Unset, as in a test that calls loadConfig, every setting flag is taken.
 */
export type RunningCommand = { name: string; settingFlags: readonly string[] }
let running: RunningCommand | null = null
export function setRunningCommand(command: RunningCommand | null): void {
  running = command
}

/**
 * Loads the configuration from argv (after the command word) and an environment.
 * Answers the config and the positional arguments and extra flags the command declared.
 */
export function loadConfig(
  argv: string[],
  env: Record<string, string | undefined>,
  extra: FlagSpec = {},
): { config: Config; positionals: string[]; flags: Record<string, string | boolean | string[] | undefined> } {
  const options: FlagSpec = { ...extra }
  for (const s of SETTINGS) if (s.flag && (!running || running.settingFlags.includes(s.flag))) options[s.flag] = { type: 'string' }
  let parsed: ReturnType<typeof parseArgs>
  try {
    parsed = parseArgs({ args: argv, options, allowPositionals: true, strict: true })
  } catch (err) {
    const e = err as Error & { code?: string }
    if (e.code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') throw new ConfigError(unknownFlag(e.message, options))
    // node's messages run on ("… To specify a positional argument …"); keep the first sentence.
    throw new ConfigError(e.message.split(/\.\s|\n/)[0]!)
  }
  const values = parsed.values as Record<string, string | boolean | string[] | undefined>
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

const TENANT = new RegExp(TENANT_PATTERN)

/** `--tenant T` of the commands that work on the local data dir: `local` when not given, else an X-Tenant-Id by its rule (src/core/tenant.ts). */
export function tenantFlag(raw: unknown): string {
  const tenant = (raw as string | undefined) ?? 'local'
  if (!TENANT.test(tenant)) throw new ConfigError(`--tenant: must be 1..128 of A-Z a-z 0-9 . _ : -, got "${tenant}"`)
  return tenant
}

/**
 * One line for a flag the command does not take: the nearest flag it does take when one is
 * close, else every flag it takes, so the line alone says how to go on.
 */
function unknownFlag(message: string, options: FlagSpec): string {
  // "Unknown option '--max-url'. …"; a cluster of short flags (-ab) names its first letter bare.
  const raw = /'([^']*)'/.exec(message)?.[1] ?? '?'
  const flag = raw.startsWith('-') ? raw : `-${raw}`
  const known = Object.entries(options).flatMap(([name, o]) => (o.short ? [`--${name}`, `-${o.short}`] : [`--${name}`]))
  const where = running ? ` for ${running.name}` : ''
  const meant = nearest(flag, known)
  if (meant) return `unknown flag ${flag}${where}; did you mean ${meant}?`
  const takes = Object.entries(options).map(([name, o]) => (o.short ? `-${o.short}/--${name}` : `--${name}`))
  return `unknown flag ${flag}${where}; ${running ? `${running.name} takes` : 'the flags are'} ${takes.length ? takes.join(', ') : 'no flags'}${running ? ` (trawl help ${running.name})` : ''}`
}

/** The settings, for `trawl help` and docs: flag (with its argument), environment variable, default, and what it does. */
export const SETTING_NAMES = SETTINGS.map((s) => ({ flag: s.flag ? `--${s.flag}` : null, value: s.value ?? null, env: s.env, default: s.fallback, says: s.says }))
