import { afterEach, describe, expect, test } from 'bun:test'
import { ConfigError, loadConfig, setRunningCommand, type FlagSpec } from '../src/config'

const load = (argv: string[], env: Record<string, string> = {}) => loadConfig(argv, env).config

describe('configuration', () => {
  test('defaults work with nothing configured', () => {
    const c = load([])
    expect(c).toMatchObject({
      dataDir: './trawl-data',
      databaseUrl: null,
      host: '127.0.0.1',
      port: 8080,
      scrapePort: 8081,
      maxActiveRuns: 4,
      allowPrivateNetworks: false,
      proxies: {},
      chromium: 'chromium',
      blobUrl: null,
      payTo: null,
      payNetwork: 'base-sepolia',
      price: '0.001',
      payMaxTimeoutMs: 300_000,
      scrapeRate: 20,
      scrapeRender: 'auto',
      maxBodyBytes: 10_485_760,
      logLevel: 'info',
    })
  })

  test('flags beat environment, environment beats defaults', () => {
    expect(load(['--port', '9000'], { TRAWL_PORT: '9100' }).port).toBe(9000)
    expect(load([], { TRAWL_PORT: '9100' }).port).toBe(9100)
    expect(load(['--data-dir', '/x'], { TRAWL_DATA_DIR: '/y' }).dataDir).toBe('/x')
    expect(load([], { TRAWL_SCRAPE_PORT: '0' }).scrapePort).toBe(0)
  })

  test('parses every environment-only setting', () => {
    const c = load([], {
      TRAWL_MAX_ACTIVE_RUNS: '8',
      TRAWL_ALLOW_PRIVATE_NETWORKS: 'true',
      TRAWL_PROXIES: 'isp=http://proxy.example:3128, dc=http://10.0.0.1:8080',
      TRAWL_BLOB_URL: 's3://bucket/prefix',
      TRAWL_S3_ENDPOINT: 'http://127.0.0.1:4569/',
      TRAWL_PAY_TO: '0x' + 'ab'.repeat(20),
      TRAWL_PAY_NETWORK: 'base',
      TRAWL_PRICE: '0.05',
      TRAWL_PAY_MAX_TIMEOUT: '1h',
      TRAWL_SCRAPE_RATE: 'off',
      TRAWL_SCRAPE_RENDER: 'never',
      TRAWL_MAX_BODY_BYTES: '1024',
      TRAWL_LOG_LEVEL: 'debug',
    })
    expect(c.maxActiveRuns).toBe(8)
    expect(c.allowPrivateNetworks).toBe(true)
    expect(c.proxies).toEqual({ isp: 'http://proxy.example:3128', dc: 'http://10.0.0.1:8080' })
    expect(c.blobUrl).toBe('s3://bucket/prefix')
    expect(c.s3Endpoint).toBe('http://127.0.0.1:4569')
    expect(c.payNetwork).toBe('base')
    expect(c.price).toBe('0.05')
    expect(c.payMaxTimeoutMs).toBe(3_600_000)
    expect(c.scrapeRate).toBeNull()
    expect(c.scrapeRender).toBe('never')
    expect(c.maxBodyBytes).toBe(1024)
    expect(c.logLevel).toBe('debug')
  })

  test.each([
    [['--port', '70000'], {}, '--port'],
    [['--port', 'abc'], {}, '--port'],
    [[], { TRAWL_PORT: '-1' }, 'TRAWL_PORT'],
    [[], { TRAWL_MAX_ACTIVE_RUNS: '0' }, 'TRAWL_MAX_ACTIVE_RUNS'],
    [[], { TRAWL_ALLOW_PRIVATE_NETWORKS: 'maybe' }, 'TRAWL_ALLOW_PRIVATE_NETWORKS'],
    [[], { TRAWL_PROXIES: 'garbage' }, 'TRAWL_PROXIES'],
    [[], { TRAWL_PROXIES: 'isp=ftp://x' }, 'TRAWL_PROXIES'],
    [[], { TRAWL_PROXIES: 'dc=socks5://127.0.0.1:1080' }, 'TRAWL_PROXIES'],
    [[], { TRAWL_BLOB_URL: 'gs://bucket' }, 'TRAWL_BLOB_URL'],
    [[], { TRAWL_BLOB_URL: 's3://bucket/../other' }, 'TRAWL_BLOB_URL: the prefix must not contain . or .. segments'],
    [[], { TRAWL_BLOB_URL: 's3://bucket/a/./b' }, 'TRAWL_BLOB_URL: the prefix must not contain . or .. segments'],
    [[], { TRAWL_PAY_TO: '0x123' }, 'TRAWL_PAY_TO'],
    [[], { TRAWL_PAY_NETWORK: 'mainnet' }, 'TRAWL_PAY_NETWORK'],
    [[], { TRAWL_PRICE: 'free' }, 'TRAWL_PRICE'],
    [[], { TRAWL_PRICE: '0' }, 'TRAWL_PRICE'],
    [[], { TRAWL_PAY_MAX_TIMEOUT: '5 minutes' }, 'TRAWL_PAY_MAX_TIMEOUT'],
    [[], { TRAWL_SCRAPE_RATE: '20' }, 'TRAWL_SCRAPE_RATE'],
    [[], { TRAWL_SCRAPE_RENDER: 'sometimes' }, 'TRAWL_SCRAPE_RENDER'],
    [[], { TRAWL_MAX_BODY_BYTES: '10MB' }, 'TRAWL_MAX_BODY_BYTES'],
    [[], { TRAWL_LOG_LEVEL: 'loud' }, 'TRAWL_LOG_LEVEL'],
    [[], { TRAWL_FACILITATOR_URL: 'not a url' }, 'TRAWL_FACILITATOR_URL'],
    [['--nope'], {}, '--nope'],
  ] as [string[], Record<string, string>, string][])('%p %p is rejected naming %s', (argv, env, name) => {
    expect(() => load(argv, env)).toThrow(ConfigError)
    expect(() => load(argv, env)).toThrow(name)
  })

  test('the price accepts a dollar sign', () => {
    expect(load([], { TRAWL_PRICE: '$0.002' }).price).toBe('0.002')
  })
})

describe('TRAWL_DATABASE_URL', () => {
  const error = (argv: string[], env: Record<string, string>) => {
    try {
      load(argv, env)
    } catch (e) {
      if (e instanceof ConfigError) return e.message
      throw e
    }
    return null
  }

  test('empty or unset is the SQLite database of the data dir', () => {
    expect(load([]).databaseUrl).toBeNull()
    expect(load([], { TRAWL_DATABASE_URL: '' }).databaseUrl).toBeNull()
    expect(load([], { TRAWL_DATABASE_URL: '  ' }).databaseUrl).toBeNull()
  })

  test('postgres:// and postgresql:// URLs are taken as written; the flag beats the environment', () => {
    expect(load([], { TRAWL_DATABASE_URL: 'postgres://trawl:pw@db.internal:5432/trawl?sslmode=require' }).databaseUrl).toBe('postgres://trawl:pw@db.internal:5432/trawl?sslmode=require')
    expect(load([], { TRAWL_DATABASE_URL: ' postgresql://db/trawl ' }).databaseUrl).toBe('postgresql://db/trawl')
    expect(load(['--database-url', 'postgres://flag/db'], { TRAWL_DATABASE_URL: 'postgres://env/db' }).databaseUrl).toBe('postgres://flag/db')
    expect(load(['--database-url='], { TRAWL_DATABASE_URL: 'postgres://env/db' }).databaseUrl).toBeNull()
  })

  test('anything else is one line naming where it came from, without the password', () => {
    const what = 'must be a postgres:// or postgresql:// URL, or empty for SQLite in the data dir'
    expect(error([], { TRAWL_DATABASE_URL: 'mysql://root:secret@db/x' })).toBe(`TRAWL_DATABASE_URL: ${what}, got "mysql://root:***@db/x"`)
    expect(error(['--database-url', 'sqlite:///var/lib/trawl.db'], {})).toBe(`--database-url: ${what}, got "sqlite:///var/lib/trawl.db"`)
    expect(error([], { TRAWL_DATABASE_URL: 'db.internal:5432' })).toBe(`TRAWL_DATABASE_URL: ${what}, got "db.internal:5432"`)
    expect(error([], { TRAWL_DATABASE_URL: 'postgres:db' })).toBe(`TRAWL_DATABASE_URL: ${what}, got "postgres:db"`)
    for (const message of [
      error([], { TRAWL_DATABASE_URL: 'http://u:s3cret@h/x' }),
      error([], { TRAWL_DATABASE_URL: 'redis://:s3cret@h' }),
      error([], { TRAWL_DATABASE_URL: 'mysql://u:s3cret@s3cret@h/db' }),
    ]) {
      expect(message).toStartWith('TRAWL_DATABASE_URL: must be')
      expect(message).not.toContain('s3cret')
      expect(message).not.toContain('\n')
    }
  })
})

describe('unknown flags', () => {
  afterEach(() => setRunningCommand(null))
  const message = (argv: string[], extra: FlagSpec = {}) => {
    try {
      loadConfig(argv, {}, extra)
    } catch (e) {
      if (e instanceof ConfigError) return e.message
      throw e
    }
    return null
  }

  test('the nearest flag is suggested, naming the command that runs', () => {
    setRunningCommand({ name: 'crawl', settingFlags: ['data-dir'] })
    const crawl: FlagSpec = { 'max-urls': { type: 'string' }, 'max-depth': { type: 'string' }, out: { type: 'string', short: 'o' } }
    expect(message(['--max-url', '5'], crawl)).toBe('unknown flag --max-url for crawl; did you mean --max-urls?')
    expect(message(['--max-dpeth', '5'], crawl)).toBe('unknown flag --max-dpeth for crawl; did you mean --max-depth?')
    expect(message(['--data-dri', 'x'], crawl)).toBe('unknown flag --data-dri for crawl; did you mean --data-dir?')
    expect(message(['--max-u', '5'], crawl)).toBe('unknown flag --max-u for crawl; did you mean --max-urls?')
  })

  test('with nothing close, the line lists what the command takes', () => {
    setRunningCommand({ name: 'crawl', settingFlags: ['data-dir'] })
    expect(message(['--frobnicate'], { 'max-urls': { type: 'string' }, out: { type: 'string', short: 'o' } })).toBe(
      'unknown flag --frobnicate for crawl; crawl takes --max-urls, -o/--out, --data-dir (trawl help crawl)',
    )
    expect(message(['-x'], { out: { type: 'string', short: 'o' } })).toBe('unknown flag -x for crawl; crawl takes -o/--out, --data-dir (trawl help crawl)')
  })

  test('a command takes only the setting flags it names; the environment still applies', () => {
    setRunningCommand({ name: 'scrape', settingFlags: [] })
    expect(message(['--port', '9000'])).toBe('unknown flag --port for scrape; scrape takes no flags (trawl help scrape)')
    expect(loadConfig([], { TRAWL_PORT: '9000' }).config.port).toBe(9000)
    setRunningCommand(null)
    expect(loadConfig(['--port', '9000'], {}).config.port).toBe(9000)
  })
})
