// A throwaway PostgreSQL cluster for the tests, started the first time a test asks for a
// database: initdb and pg_ctl in a temp dir, on a free port of 127.0.0.1, as the `postgres` (or
// `nobody`) user when the tests run as root, since PostgreSQL refuses to run as root. One cluster
// serves the whole `bun test` process; each caller gets a database of its own, copied from a
// template migrated once. Nothing is skipped without PostgreSQL: the first caller fails and says
// what to install.
import { chownSync, existsSync, mkdtempSync, readdirSync } from 'node:fs'
import { tmpdir, userInfo } from 'node:os'
import { join } from 'node:path'

type Cluster = { dir: string; port: number; bin: string; asUser: string[]; options: string }

let cluster: Cluster | null = null
let databases = 0

const INSTALL =
  "PostgreSQL's server is not installed: the tests start a throwaway cluster with its initdb and pg_ctl. Install Debian's `postgresql` package (apt-get install postgresql), or put initdb on PATH"

function binDir(): string {
  const debian = '/usr/lib/postgresql'
  if (existsSync(debian)) {
    const versions = readdirSync(debian)
      .filter((v) => existsSync(join(debian, v, 'bin', 'initdb')))
      .sort((a, b) => Number(b) - Number(a))
    if (versions.length) return join(debian, versions[0]!, 'bin')
  }
  const which = Bun.which('initdb')
  if (which) return join(which, '..')
  throw new Error(INSTALL)
}

/** PostgreSQL will not run as root: its commands then run as an unprivileged user that owns the cluster's folder. */
function unprivileged(dir: string): string[] {
  if (userInfo().uid !== 0) return []
  const user = Bun.spawnSync(['id', '-u', 'postgres']).exitCode === 0 ? 'postgres' : 'nobody'
  const uid = Number(Bun.spawnSync(['id', '-u', user]).stdout.toString().trim())
  const gid = Number(Bun.spawnSync(['id', '-g', user]).stdout.toString().trim())
  chownSync(dir, uid, gid)
  return ['setpriv', `--reuid=${uid}`, `--regid=${gid}`, '--clear-groups']
}

function run(cmd: string[], what: string) {
  const r = Bun.spawnSync(cmd, { stdout: 'pipe', stderr: 'pipe', cwd: tmpdir() })
  if (r.exitCode !== 0) throw new Error(`${what} failed (${r.exitCode}): ${r.stderr.toString().trim() || r.stdout.toString().trim()}`)
  return r.stdout.toString()
}

function freePort(): number {
  const out = run([process.execPath, '-e', 'const s = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } }); console.log(s.port); s.stop(true)'], 'finding a free port')
  return Number(out.trim())
}

function start(): Cluster {
  const bin = binDir()
  const dir = mkdtempSync(join(tmpdir(), 'trawl-pg-'))
  const asUser = unprivileged(dir)
  run([...asUser, join(bin, 'initdb'), '-D', join(dir, 'data'), '-U', 'trawl', '--auth=trust', '-E', 'UTF8', '--locale=C', '--no-sync'], 'initdb')
  // Durability settings off: a test cluster is thrown away, and fsync costs seconds per suite.
  const options = `-p {PORT} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=400 -c shared_buffers=32MB`
  for (let attempt = 0; ; attempt++) {
    const port = freePort()
    const r = Bun.spawnSync([...asUser, join(bin, 'pg_ctl'), '-D', join(dir, 'data'), '-o', options.replace('{PORT}', String(port)), '-l', join(dir, 'log'), '-w', '-t', '60', 'start'], {
      stdout: 'pipe',
      stderr: 'pipe',
      cwd: tmpdir(),
    })
    if (r.exitCode === 0) {
      const c = { dir, port, bin, asUser, options: options.replace('{PORT}', String(port)) }
      watchOver(c)
      return c
    }
    if (attempt >= 3) throw new Error(`pg_ctl start failed: ${r.stderr.toString().trim()}`)
  }
}

/**
 * Stops the cluster and removes its folder once this process is gone, however it goes: `bun test`
 * runs no exit hook, and a killed test run runs none at all. A detached shell polls for this
 * process's pid, then stops PostgreSQL.
 */
function watchOver(c: Cluster) {
  const pgCtl = [...c.asUser, join(c.bin, 'pg_ctl'), '-D', join(c.dir, 'data'), '-m', 'immediate', 'stop'].map((a) => `'${a}'`).join(' ')
  const script = `while kill -0 ${process.pid} 2>/dev/null; do sleep 1; done; ${pgCtl} >/dev/null 2>&1; rm -rf '${c.dir}'`
  const watcher = Bun.spawn(['setsid', 'sh', '-c', script], { stdin: 'ignore', stdout: 'ignore', stderr: 'ignore', cwd: tmpdir() })
  watcher.unref()
}

const psql = (c: Cluster, command: string) =>
  run(['psql', '-h', '127.0.0.1', '-p', String(c.port), '-U', 'trawl', '-d', 'postgres', '-v', 'ON_ERROR_STOP=1', '-q', '-c', command], `psql -c ${command}`)

/** The server's URL for a database of this cluster. */
export const urlOf = (port: number, database: string) => `postgres://trawl@127.0.0.1:${port}/${database}`

function ensureCluster(): Cluster {
  if (cluster) return cluster
  const c = start()
  // The template every test database is copied from, migrated by the engine's own migrator.
  psql(c, 'CREATE DATABASE trawl_template')
  run([process.execPath, join(import.meta.dir, 'postgres-migrate.ts'), urlOf(c.port, 'trawl_template')], 'migrating the template database')
  cluster = c
  return c
}

/**
 * A new, migrated, empty database of the test cluster (started on first use): its URL. Synchronous,
 * so a test helper can hand out a store at once. `migrated: false` gives an empty database.
 */
export function freshDatabase(opts: { migrated?: boolean } = {}): string {
  const c = ensureCluster()
  const name = `t${process.pid}_${++databases}`
  psql(c, opts.migrated === false ? `CREATE DATABASE ${name}` : `CREATE DATABASE ${name} TEMPLATE trawl_template`)
  return urlOf(c.port, name)
}

/** The port of the test cluster (started on first use). */
export function clusterPort(): number {
  return ensureCluster().port
}

/**
 * Takes the test cluster away (a fast shutdown: connections are cut) and answers how to bring it
 * back on the same port: what a process sees when its database goes away for a while.
 */
export function takeClusterAway(): { back(): void } {
  const c = ensureCluster()
  run([...c.asUser, join(c.bin, 'pg_ctl'), '-D', join(c.dir, 'data'), '-m', 'fast', '-w', 'stop'], 'pg_ctl stop')
  return {
    back() {
      run([...c.asUser, join(c.bin, 'pg_ctl'), '-D', join(c.dir, 'data'), '-o', c.options, '-l', join(c.dir, 'log'), '-w', '-t', '60', 'start'], 'pg_ctl start')
    },
  }
}
