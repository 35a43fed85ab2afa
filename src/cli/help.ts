import { SETTING_NAMES } from '../config'
import { VERSION } from '../version'

/**
 * What `trawl help`, `trawl help COMMAND` and `trawl COMMAND --help` print. This module is text
 * only and imports no command, so help never loads what a command runs (Chromium, the store,
 * the HTTP stack). The flags a command's parser takes are declared in the command's own module;
 * test/cli/help.test.ts holds the two lists to each other through the binary.
 */

/** A flag a command takes: its long name, its one-letter form, the argument it wants, and what it does. */
type Flag = { flag: string; short?: string; value?: string; says: string }

type Command = {
  name: string
  /** The arguments after the command word, as the synopsis shows them. */
  args: string
  /** One line for the command list. */
  summary: string
  /** A few lines on what the command does, under the synopsis. */
  about: string
  flags: Flag[]
  /** The setting flags the command takes (without `--`); every command reads the TRAWL_* variables. */
  settings: string[]
  examples: string[]
  /** Exit statuses, for the commands a script runs. */
  exits?: [number, string][]
}

const COMMANDS: Command[] = [
  {
    name: 'serve',
    args: '',
    summary: 'run the management API and the scrape API until stopped',
    about:
      'Serves the management API (jobs, runs, links, artifacts, parse, fetch, /mcp, and the dashboard at /) and the scrape API on their two ports, and crawls the runs the API creates. Ctrl-C or SIGTERM stops it cleanly.',
    flags: [],
    settings: ['data-dir', 'database-url', 'host', 'port', 'scrape-port', 'metrics-port'],
    examples: ['trawl serve', 'trawl serve --data-dir /var/lib/trawl --host 0.0.0.0 --port 8080 --scrape-port 8081'],
    exits: [
      [0, 'stopped by SIGINT or SIGTERM'],
      [1, 'the ports could not be bound, or the shutdown failed'],
      [2, 'a bad flag or setting, or a data dir or database that cannot be used'],
    ],
  },
  {
    name: 'crawl',
    args: 'URL',
    summary: 'crawl a site from one URL in this process, then print a summary',
    about:
      'Creates a job and a run in the data dir, crawls it here with a progress line on stderr, and ends with the outcome and the counts of failed URLs by reason. Private addresses are allowed (set TRAWL_ALLOW_PRIVATE_NETWORKS=false to refuse them). Ctrl-C stops the run.',
    flags: [
      { flag: 'max-urls', value: 'N', says: 'stop after N URLs (default 1000)' },
      { flag: 'max-depth', value: 'N', says: 'follow links at most N steps from the seed (default 3)' },
      { flag: 'concurrency', value: 'N', says: 'requests in flight at once, all hosts together (default 16)' },
      { flag: 'per-host-concurrency', value: 'N', says: 'requests in flight at once to one host (default 2)' },
      { flag: 'include', value: 'REGEX', says: 'crawl only URLs in which this RE2 pattern matches (the seed too); repeat it to allow more' },
      { flag: 'exclude', value: 'REGEX', says: 'skip URLs in which this RE2 pattern matches; repeat it for more' },
      { flag: 'same-domain', says: "also crawl the other hosts of the seed's domain (docs.example.com and www.example.com); by default only the seed's host" },
      { flag: 'sitemaps', says: "also take the URLs of the site's sitemaps (robots.txt Sitemap lines, /sitemap.xml)" },
      { flag: 'delay', value: 'DURATION', says: 'wait at least this long between requests to one host: 500ms, 2s, or a number of seconds' },
      { flag: 'out', short: 'o', value: 'FILE', says: 'when the crawl ends, write its pages as JSONL to FILE, one object per URL (as trawl export does)' },
      { flag: 'out-dir', value: 'DIR', says: 'when the crawl ends, write one markdown file per page under DIR, paths mirroring the URLs, and DIR/index.md' },
      { flag: 'tenant', value: 'T', says: 'the tenant the job and run belong to (default local); trawl serve shows them to X-Tenant-Id T' },
    ],
    settings: ['data-dir', 'database-url'],
    examples: ['trawl crawl http://127.0.0.1:8000/ --out-dir site-md', "trawl crawl https://docs.example.com/ --include '/guide/' --max-urls 500 -o pages.jsonl"],
    exits: [
      [0, 'the run finished and at least one page was fetched'],
      [1, 'no page could be fetched (outcome failed), or the run was left unfinished (paused from elsewhere)'],
      [2, 'a bad URL, flag or setting, or a data dir or database that cannot be used; nothing is created'],
      [130, 'stopped by Ctrl-C, after the summary (128 + the signal: 143 for SIGTERM, 129 for SIGHUP)'],
    ],
  },
  {
    name: 'scrape',
    args: 'URL',
    summary: 'print one page as markdown, HTML or extracted JSON',
    about:
      'Fetches one URL in this process, with no server and no payment, and prints its main-content markdown (by default), its HTML, the fields a fields file extracts, or the bytes of a PDF or image. Chromium renders only pages that need script, unless --render says otherwise. Private addresses are allowed.',
    flags: [
      { flag: 'format', value: 'markdown|html|json', says: 'what to print (default markdown); json needs --fields' },
      { flag: 'fields', value: 'FILE', says: 'a JSON array of fields to extract, for --format json (docs/extract.md)' },
      { flag: 'timeout', value: 'SECONDS', says: 'give up on the page after this long (default 30)' },
      { flag: 'locale', value: 'TAG', says: 'ask for the page in this language, e.g. de-DE (Accept-Language)' },
      { flag: 'render', value: 'auto|never|always', says: 'when to render with Chromium: auto only renders pages that need script (default TRAWL_SCRAPE_RENDER, auto)' },
      { flag: 'main-content', value: 'true|false', says: 'markdown of the main content only, without navigation, header, footer and sidebars (default true)' },
    ],
    settings: [],
    examples: ['trawl scrape http://127.0.0.1:8000/', 'trawl scrape https://example.com/ --format json --fields fields.json'],
    exits: [
      [0, 'the page was printed'],
      [1, 'the page could not be fetched or rendered'],
      [2, 'a bad URL, flag or setting'],
    ],
  },
  {
    name: 'export',
    args: 'RUN_ID',
    summary: "write a run's pages as JSONL, one llms.txt-style document, or markdown files",
    about:
      "Reads a run from the data dir and renders its pages' markdown now, on all cores. JSONL has one object per URL: url, status, title, markdown, extracted data, outlinks, visit time, artifact ids, and the error of a URL that failed.",
    flags: [
      { flag: 'format', value: 'jsonl|llms', says: 'one JSON object per URL, or one markdown document of every page (default jsonl)' },
      { flag: 'out', short: 'o', value: 'FILE', says: 'write to FILE instead of stdout' },
      { flag: 'out-dir', value: 'DIR', says: 'instead, write one markdown file per page under DIR, paths mirroring the URLs, and DIR/index.md (takes neither -o nor --format)' },
      { flag: 'main-content', value: 'true|false', says: 'markdown of the main content only (default true)' },
      { flag: 'tenant', value: 'T', says: 'the tenant the run belongs to (default local)' },
    ],
    settings: ['data-dir', 'database-url'],
    examples: ['trawl export 50f28749-c627-4384-8e8b-90f667bce32b -o pages.jsonl', 'trawl export 50f28749-c627-4384-8e8b-90f667bce32b --format llms > site.txt'],
    exits: [
      [0, 'the pages were written'],
      [1, 'the data dir or the run does not exist'],
      [2, 'a bad run id, flag or setting, or a file that cannot be written'],
    ],
  },
  {
    name: 'extract',
    args: 'URL (--fields FILE | --data-map ID)',
    summary: 'try a fields file or a stored data map on a live page and print the extracted JSON',
    about:
      'Fetches the URL as POST /v1/data_maps/{id}/apply does by url, applies the fields (the JSON array a data map or the scrape API takes, docs/extract.md) or a data map stored in the data dir, and prints the result as JSON; each extraction error is a line on stderr. Private addresses are allowed.',
    flags: [
      { flag: 'fields', value: 'FILE', says: 'the JSON array of fields to extract, or a data map\'s {"item_selector","fields"} for one object per item' },
      { flag: 'data-map', value: 'ID', says: 'apply this stored data map of the tenant instead of a fields file' },
      { flag: 'timeout', value: 'SECONDS', says: 'give up on the page after this long (default 30)' },
      { flag: 'tenant', value: 'T', says: 'the tenant whose data map --data-map names (default local)' },
    ],
    settings: ['data-dir', 'database-url'],
    examples: ['trawl extract http://127.0.0.1:8000/ --fields fields.json', 'trawl extract https://example.com/item/1 --data-map 3f0c8a8e-6b7d-4c1e-9a53-2f4d1b6e9c10'],
    exits: [
      [0, 'the page was read and the JSON printed, even with extraction errors'],
      [1, 'the page could not be fetched or read'],
      [2, 'a bad URL, flag or fields file, or an unknown data map'],
    ],
  },
  {
    name: 'mcp',
    args: '',
    summary: 'serve the scrape, crawl and extract tools to a local agent over MCP (stdio)',
    about:
      'Speaks the Model Context Protocol on stdin and stdout, and crawls the runs its tools start in this process, in the data dir. Nothing but protocol messages goes to stdout; logs go to stderr. `trawl serve` offers the same tools over streamable HTTP at /mcp on its management port (the tenant from X-Tenant-Id).',
    flags: [{ flag: 'tenant', value: 'T', says: 'the tenant the tools act as (default local)' }],
    settings: ['data-dir', 'database-url'],
    examples: ['trawl mcp --data-dir ~/trawl-data'],
  },
  {
    name: 'payments',
    args: '',
    summary: 'list the scrape API payment ledger, newest first',
    about: 'Prints the x402 payments the scrape API accepted, as a table, or one JSON object a line with the signed authorization an operator needs to settle a payment by hand.',
    flags: [
      { flag: 'status', value: 'S', says: 'only payments in this status: accepted, served, handler_failed, settled or settle_failed' },
      { flag: 'json', says: 'one JSON object per line instead of the table' },
    ],
    settings: ['data-dir', 'database-url'],
    examples: ['trawl payments', 'trawl payments --status accepted --json'],
  },
  {
    name: 'db',
    args: 'copy --to postgres://… [--blobs s3://bucket/prefix]',
    summary: 'copy the data dir into an empty PostgreSQL database, and its bodies into S3',
    about:
      "Copies every table of the data dir's trawl.db into an empty PostgreSQL database, seqs and ids kept, in one transaction, and every body its artifacts name into S3 with its index row (docs/cluster.md). Bodies already in S3 (TRAWL_BLOB_URL) stay where they are unless --blobs names another place. Prints a line per table and a summary.",
    flags: [
      { flag: 'to', value: 'URL', says: 'the PostgreSQL database to copy into (postgres://user:password@host:port/database); it must hold no rows' },
      { flag: 'blobs', value: 'URL', says: 'the S3 location the bodies go to (s3://bucket/prefix); needed when the bodies are on disk' },
      { flag: 'force', says: 'copy even while a run is being crawled, as the data dir is at the start' },
    ],
    settings: ['data-dir'],
    examples: ['trawl db copy --to postgres://trawl:secret@db.internal/trawl --blobs s3://crawls/trawl'],
    exits: [
      [0, 'everything was copied'],
      [1, 'the copy failed on the way; nothing was committed to the database'],
      [2, 'a bad flag, no data dir, a run being crawled, a database that cannot be reached or holds rows, or bodies with no S3 location'],
    ],
  },
  {
    name: 'version',
    args: '',
    summary: "print trawl's version and the Bun it runs on",
    about: 'Prints one line: trawl VERSION (bun VERSION).',
    flags: [],
    settings: [],
    examples: ['trawl version'],
  },
  {
    name: 'help',
    args: '[COMMAND]',
    summary: "print the commands and the settings, or one command's flags",
    about:
      'Without a command: every command and every setting with its flag, environment variable, default and meaning. With one: its usage, its flags, examples and exit statuses, as `trawl COMMAND --help` prints them.',
    flags: [],
    settings: [],
    examples: ['trawl help', 'trawl help crawl'],
  },
]

export const COMMAND_NAMES = COMMANDS.map((c) => c.name)

const WIDTH = 100

/** `text` broken into lines of at most WIDTH characters, each after `indent`. */
function wrap(text: string, indent: string, first = indent): string {
  const lines: string[] = []
  let line = first
  for (const word of text.split(/\s+/)) {
    const fresh = line === first || line === indent
    if (!fresh && line.length + 1 + word.length > WIDTH) {
      lines.push(line)
      line = indent + word
    } else line += (fresh ? '' : ' ') + word
  }
  lines.push(line)
  return lines.join('\n')
}

/** Rows of a name column and a wrapped description column. */
function table(rows: [string, string][]): string {
  const width = Math.min(30, Math.max(...rows.map(([name]) => name.length)) + 2)
  return rows.map(([name, says]) => (name.length + 2 > width ? `  ${name}\n${wrap(says, ' '.repeat(width + 2))}` : wrap(says, ' '.repeat(width + 2), `  ${name.padEnd(width)}`))).join('\n')
}

const synopsis = (c: Command) => `trawl ${c.name}${c.args ? ` ${c.args}` : ''}`

/** The command list: one line each. */
export function commandList(): string {
  return `commands:\n${table(COMMANDS.map((c) => [synopsis(c), c.summary]))}\n`
}

/** `trawl help`: the commands, then every setting and what it does. */
export function overview(): string {
  const settings = SETTING_NAMES.map((s) => {
    const name = s.flag ? `${s.flag}${s.value ? ` ${s.value}` : ''}, ${s.env}` : s.env
    return `  ${name}  (default ${s.default === '' ? 'unset' : s.default})\n${wrap(s.says, '      ')}`
  })
  return `trawl ${VERSION}: crawl management and scrape service

usage:
  trawl COMMAND [ARGUMENTS] [FLAGS]

${commandList()}
\`trawl help COMMAND\` or \`trawl COMMAND --help\` prints a command's flags, examples and exit statuses.

settings: a flag beats the environment variable, which beats the default (docs/configuration.md)
${settings.join('\n')}
`
}

/** `trawl help NAME` and `trawl NAME --help`; null for a name that is not a command. */
export function commandHelp(name: string): string | null {
  const c = COMMANDS.find((c) => c.name === name)
  if (!c) return null
  const setting = (flag: string) => {
    const s = SETTING_NAMES.find((s) => s.flag === `--${flag}`)!
    return { flag, value: s.value ?? undefined, says: `${s.says[0]!.toLowerCase()}${s.says.slice(1).replace(/\.$/, '')} (${s.env}; default ${s.default === '' ? 'unset' : s.default})` } satisfies Flag
  }
  const flags = [...c.flags, ...c.settings.map(setting), { flag: 'help', short: 'h', says: 'print this help' }]
  const label = (f: Flag) => `${f.short ? `-${f.short}, ` : ''}--${f.flag}${f.value ? ` ${f.value}` : ''}`
  const parts = [
    `usage: ${synopsis(c)}${flags.length > 1 ? ' [FLAGS]' : ''}`,
    wrap(c.about, ''),
    `flags:\n${table(flags.map((f) => [label(f), f.says]))}`,
    `examples:\n${c.examples.map((e) => `  ${e}`).join('\n')}`,
  ]
  if (c.exits) parts.push(`exit status:\n${table(c.exits.map(([code, says]) => [String(code), says]))}`)
  if (c.name !== 'help' && c.name !== 'version') parts.push('The TRAWL_* environment variables apply too: `trawl help` lists them.')
  return `${parts.join('\n\n')}\n`
}

/** The setting flags a command takes, for loadConfig; every setting flag for a name not listed. */
export function settingFlagsOf(name: string): string[] | null {
  return COMMANDS.find((c) => c.name === name)?.settings ?? null
}
