import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { SETTING_NAMES } from '../../src/config'
import { cleanup, ensureBinary, REPO, runBinary, tempDir } from '../helpers/binary'

/**
 * The help a newcomer reads, through the compiled binary: every command's help, and the flags
 * it lists held against the flags the command's parser takes (which an unknown flag's error
 * lists), so a flag added without a help line fails here.
 */

beforeAll(ensureBinary, 120_000)
afterAll(cleanup)

/** The commands `trawl help` lists, from its output: `  trawl NAME …` lines under `commands:`. */
async function listedCommands(): Promise<string[]> {
  const r = await runBinary(['help'])
  const section = r.stdout.split('\ncommands:\n')[1]!.split('\n\n')[0]!
  return [...section.matchAll(/^ {2}trawl (\S+)/gm)].map((m) => m[1]!)
}

/** The flags a help text lists in its `flags:` section, `--help`/`-h` left out. */
function helpFlags(text: string): string[] {
  const section = text.split('\nflags:\n')[1]!.split('\n\n')[0]!
  const labels = section
    .split('\n')
    .filter((l) => /^ {2}-/.test(l))
    .map((l) => l.trim().split(/\s{2,}/)[0]!)
  return labels
    .flatMap((l) => l.match(/(?<![\w-])--?[a-z][\w-]*/g) ?? [])
    .filter((f) => f !== '--help' && f !== '-h')
    .sort()
}

/** The flags the parser of `command` takes, as its error for a flag it does not know lists them. */
async function parserFlags(command: string): Promise<string[]> {
  const r = await runBinary([command, '--zz-no-such-flag'])
  const m = new RegExp(`^trawl: unknown flag --zz-no-such-flag for ${command}; ${command} takes (.*) \\(trawl help ${command}\\)\\n$`).exec(r.stderr)
  // Anything else answers with what it said, for the comparison to show.
  if (!m || r.code !== 2 || r.stdout !== '') return [`exit ${r.code}: ${r.stderr.split('\n')[0]}`]
  return m[1] === 'no flags'
    ? []
    : m[1]!
        .split(', ')
        .flatMap((f) => f.split('/'))
        .sort()
}

describe('trawl help', () => {
  test('lists the commands, one line each, and exits 0', async () => {
    const r = await runBinary(['help'])
    expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: '' })
    expect(await listedCommands()).toEqual(['serve', 'crawl', 'scrape', 'export', 'extract', 'mcp', 'payments', 'db', 'version', 'help'])
    const section = r.stdout.split('\ncommands:\n')[1]!.split('\n\n')[0]!
    expect(section).toContain('trawl crawl URL')
    expect(section).toMatch(/trawl crawl URL +crawl a site from one URL/)
  })

  test('says what every setting does: flag, environment variable, default and a description', async () => {
    const r = await runBinary(['help'])
    const settings = r.stdout.split('\nsettings: ')[1]!
    for (const s of SETTING_NAMES) {
      expect(s.says.length).toBeGreaterThan(20)
      const head = `  ${s.flag ? `${s.flag}${s.value ? ` ${s.value}` : ''}, ` : ''}${s.env}  (default ${s.default === '' ? 'unset' : s.default})\n`
      const at = settings.indexOf(head)
      expect(at, `${s.env} in trawl help`).toBeGreaterThanOrEqual(0)
      // The description follows, wrapped and indented by six.
      const body = settings.slice(at + head.length).split(/\n(?! {6})/)[0]!
      expect(body.replace(/\s+/g, ' ').trim()).toBe(s.says)
    }
  })

  test('docs/configuration.md has a row for every setting, with its default', () => {
    const doc = readFileSync(join(REPO, 'docs/configuration.md'), 'utf8')
    for (const s of SETTING_NAMES) {
      const row = doc.split('\n').find((l) => l.startsWith(s.flag ? `| \`${s.flag}\` / \`${s.env}\` |` : `| \`${s.env}\` |`))
      expect(row, `${s.env} row in docs/configuration.md`).toBeDefined()
      if (s.default !== '') expect(row!.split(' | ')[1]).toContain(`\`${s.default}\``)
    }
  })

  test('no command prints the same overview and exits 2', async () => {
    const [none, help] = await Promise.all([runBinary([]), runBinary(['help'])])
    expect(none.code).toBe(2)
    expect(none.stdout).toBe(help.stdout)
    expect(none.stdout).toContain('usage:')
  })

  test('help for a name that is no command is one line naming the commands, exit 2', async () => {
    const r = await runBinary(['help', 'nosuch'])
    expect({ code: r.code, stdout: r.stdout }).toEqual({ code: 2, stdout: '' })
    expect(r.stderr).toBe('trawl: help: no command "nosuch"; the commands are serve, crawl, scrape, export, extract, mcp, payments, db, version, help\n')
    const near = await runBinary(['help', 'scarpe'])
    expect(near.stderr).toStartWith('trawl: help: no command "scarpe"; did you mean scrape?; the commands are serve, ')
    expect(near.code).toBe(2)
  })
})

describe('each command has help', () => {
  test('trawl help CMD, trawl CMD --help and trawl CMD -h print the same, exit 0', async () => {
    for (const command of await listedCommands()) {
      const [viaHelp, long, short, after] = await Promise.all([
        runBinary(['help', command]),
        runBinary([command, '--help']),
        runBinary([command, '-h']),
        runBinary([command, 'http://127.0.0.1:1/', '--max-urls', '5', '--help']),
      ])
      expect({ code: viaHelp.code, stderr: viaHelp.stderr }).toEqual({ code: 0, stderr: '' })
      expect(viaHelp.stdout).toStartWith(`usage: trawl ${command}`)
      for (const other of [long, short, after]) expect({ code: other.code, stdout: other.stdout, stderr: other.stderr }).toEqual({ code: 0, stdout: viaHelp.stdout, stderr: '' })
    }
  })

  test('every flag a command takes has a line in its help, and every flag its help lists is taken', async () => {
    const commands = (await listedCommands()).filter((c) => c !== 'version' && c !== 'help')
    const helps = await Promise.all(commands.map(async (c) => (await runBinary(['help', c])).stdout))
    const documented = Object.fromEntries(commands.map((c, i) => [c, helpFlags(helps[i]!)]))
    const taken = Object.fromEntries(await Promise.all(commands.map(async (c) => [c, await parserFlags(c)] as const)))
    expect(documented).toEqual(taken)
    for (const [i, command] of commands.entries()) {
      const help = helps[i]!
      // Every flag line says something.
      for (const line of help
        .split('\nflags:\n')[1]!
        .split('\n\n')[0]!
        .split('\n')
        .filter((l) => /^ {2}-/.test(l))) {
        if (!/^ {2}\S.*\S {2,}\S/.test(line)) throw new Error(`${command}: a flag line without its description: "${line}"`)
      }
    }
  })

  test('no line of help is wider than 100 columns', async () => {
    for (const command of ['', ...(await listedCommands())]) {
      const text = (await runBinary(command ? ['help', command] : ['help'])).stdout
      expect(
        text.split('\n').filter((l) => l.length > 100),
        command,
      ).toEqual([])
    }
  })

  test('the commands a script runs give examples and their exit statuses', async () => {
    for (const command of ['crawl', 'scrape', 'export', 'extract']) {
      const help = (await runBinary(['help', command])).stdout
      expect(help).toContain(`\nexamples:\n  trawl ${command} `)
      const exits = help.split('\nexit status:\n')[1]!.split('\n\n')[0]!
      for (const code of [0, 1, 2]) expect(exits, `${command} exit ${code}`).toMatch(new RegExp(`^ {2}${code} {2,}\\S`, 'm'))
    }
    const crawl = (await runBinary(['help', 'crawl'])).stdout
    expect(crawl).toMatch(/ {2}1 {2,}no page could be fetched \(outcome failed\)/)
  })

  test('help starts nothing: serve --help with a bad port setting prints help and exits at once', async () => {
    const dataDir = join(tempDir(), 'data')
    const r = await runBinary(['serve', '--port', '99999', '--data-dir', dataDir, '--help'], { TRAWL_LOG_LEVEL: 'loud' })
    expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: '' })
    expect(r.stdout).toStartWith('usage: trawl serve')
    expect(existsSync(dataDir)).toBe(false)
  })
})

describe('a mistyped flag or command gets the nearest', () => {
  test('trawl crawl --max-url 5 suggests --max-urls, one line, exit 2, nothing created', async () => {
    const dataDir = join(tempDir(), 'data')
    const r = await runBinary(['crawl', 'http://127.0.0.1:1/', '--max-url', '5', '--data-dir', dataDir])
    expect(r).toMatchObject({ code: 2, stdout: '', stderr: 'trawl: unknown flag --max-url for crawl; did you mean --max-urls?\n' })
    expect(existsSync(dataDir)).toBe(false)
  })

  test.each([
    [['serve', '--prot', '1'], 'trawl: unknown flag --prot for serve; did you mean --port?\n'],
    [['scrape', 'http://127.0.0.1:1/', '--formt', 'html'], 'trawl: unknown flag --formt for scrape; did you mean --format?\n'],
    [['payments', '--jsno'], 'trawl: unknown flag --jsno for payments; did you mean --json?\n'],
  ])('%p', async (args, line) => {
    const r = await runBinary(args)
    expect(r).toMatchObject({ code: 2, stdout: '', stderr: line })
  })

  test('a flag of another command is not taken, and nothing close means no guess', async () => {
    const r = await runBinary(['scrape', 'http://127.0.0.1:1/', '--port', '9000'])
    expect({ code: r.code, stdout: r.stdout }).toEqual({ code: 2, stdout: '' })
    expect(r.stderr).toStartWith('trawl: unknown flag --port for scrape; scrape takes --format, --fields, ')
    expect(r.stderr).not.toContain('did you mean')
    expect(r.stderr.trimEnd().split('\n')).toHaveLength(1)
  })

  test('trawl crawel suggests crawl; a word nothing like a command gets no guess', async () => {
    const r = await runBinary(['crawel'])
    expect({ code: r.code, stdout: r.stdout }).toEqual({ code: 2, stdout: '' })
    expect(r.stderr.split('\n')[0]).toBe('trawl: unknown command "crawel"; did you mean crawl?')
    expect(r.stderr).toContain('\ncommands:\n  trawl serve ')
    const far = await runBinary(['frobnicate'])
    expect(far.code).toBe(2)
    expect(far.stderr.split('\n')[0]).toBe('trawl: unknown command "frobnicate"')
  })
})
