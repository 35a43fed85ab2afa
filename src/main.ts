#!/usr/bin/env bun
import { commandHelp, commandList, COMMAND_NAMES, overview, settingFlagsOf } from './cli/help'
import { ConfigError, ListenError, loadConfig, setRunningCommand } from './config'
import { createLogger } from './log'
import { nearest } from './util/nearest'
import { VERSION } from './version'

// Each command loads only what it runs: `trawl crawl` never loads the HTTP stack (Elysia, the
// OpenAPI plugin, the docs UI), which keeps a one-shot crawl's memory down.

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv
  // Help is answered here, before a command's module loads, so it is there for every command
  // and costs none of what the command would start.
  if (command !== undefined && COMMAND_NAMES.includes(command) && asksForHelp(rest)) return help([command])
  const settingFlags = command === undefined ? null : settingFlagsOf(command)
  if (settingFlags) setRunningCommand({ name: command!, settingFlags })
  switch (command) {
    case 'version':
    case '--version':
      process.stdout.write(`trawl ${VERSION} (bun ${Bun.version})\n`)
      return 0
    case 'serve':
      return serve(rest)
    case 'crawl':
      return (await import('./cli/crawl')).crawlCommand(rest)
    case 'scrape':
      return (await import('./cli/scrape')).scrapeCommand(rest)
    case 'export':
      return (await import('./cli/export')).exportCommand(rest)
    case 'extract':
      return (await import('./cli/extract')).extractCommand(rest)
    case 'payments':
      return (await import('./cli/payments')).paymentsCommand(rest)
    case 'db':
      return (await import('./cli/db-copy')).dbCommand(rest)
    case 'mcp':
      return (await import('./cli/mcp')).mcpCommand(rest)
    case 'help':
      return help(rest)
    case undefined:
    case '--help':
    case '-h':
      process.stdout.write(overview())
      return command === undefined ? 2 : 0
    default: {
      const meant = nearest(
        command,
        COMMAND_NAMES.filter((c) => c !== command),
      )
      process.stderr.write(`trawl: unknown command "${command}"${meant ? `; did you mean ${meant}?` : ''}\n\n${commandList()}`)
      return 2
    }
  }
}

/** `--help` or `-h` among a command's arguments, before a `--` that ends the flags. */
function asksForHelp(args: string[]): boolean {
  const end = args.indexOf('--')
  return (end < 0 ? args : args.slice(0, end)).some((a) => a === '--help' || a === '-h')
}

/** `trawl help [COMMAND]`: the overview, or one command's help; a name that is no command is a usage error. */
function help(args: string[]): number {
  if (args.length === 0) {
    process.stdout.write(overview())
    return 0
  }
  const text = args.length === 1 ? commandHelp(args[0]!) : null
  if (text === null) {
    if (args.length > 1) throw new ConfigError(`help takes one command, got ${args.length}: ${args.join(' ')}`)
    const meant = nearest(args[0]!, COMMAND_NAMES)
    throw new ConfigError(`help: no command "${args[0]}"${meant ? `; did you mean ${meant}?` : ''}; the commands are ${COMMAND_NAMES.join(', ')}`)
  }
  process.stdout.write(text)
  return 0
}

async function serve(argv: string[]): Promise<number> {
  const { config, positionals } = loadConfig(argv, process.env)
  if (positionals.length > 0) throw new ConfigError(`serve takes no arguments, got "${positionals[0]}"`)
  const log = createLogger(config.logLevel)
  const { startServer } = await import('./server')
  const server = await startServer(config, log)
  process.stdout.write(
    `trawl ${VERSION} listening: management ${server.managementUrl}, scrape ${server.scrapeUrl}${server.metricsUrl ? `, metrics ${server.metricsUrl}` : ''} (${config.payTo ? `paid, ${config.price} USD per request to ${config.payTo} on ${config.payNetwork}` : 'free: TRAWL_PAY_TO is not set'})\n`,
  )
  return new Promise((resolve) => {
    const shutdown = (signal: string) => {
      log.info('shutting down', { signal })
      server.stop().then(
        () => resolve(0),
        (err) => {
          log.error('shutdown failed', { error: String(err) })
          resolve(1)
        },
      )
    }
    process.once('SIGINT', () => shutdown('SIGINT'))
    process.once('SIGTERM', () => shutdown('SIGTERM'))
  })
}

// process.exit right after process.stdout.write drops what a pipe has not taken yet (measured:
// 128 KiB of a scraped 10 MiB reached `wc -c`); ending stdout waits until everything is written.
const flushStdout = () => new Promise<void>((resolve) => process.stdout.end(() => resolve()))

main(process.argv.slice(2)).then(
  async (code) => {
    await flushStdout()
    process.exit(code)
  },
  (err) => {
    if (err instanceof ConfigError) {
      // One line whatever a library put in the message (a database driver's error may run on).
      process.stderr.write(`trawl: ${err.message.replace(/\s*\n\s*/g, ' ')}\n`)
      process.exit(2)
    }
    const message = err instanceof ListenError ? err.message : String((err as Error)?.stack ?? err)
    process.stderr.write(`trawl: ${message}\n`)
    process.exit(1)
  },
)
