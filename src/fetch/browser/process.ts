import { accessSync, constants, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { readdir, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Logger } from '../../log'
import { FetchError } from '../errors'
import { pidAlive } from '../../util/process'

/**
 * The flags measured to work from the compiled binary (design.md, measured fact 7) plus the
 * ones that keep a headless browser quiet, offline-safe and cheap on a small machine. HTTPS
 * upgrades are off: a URL is fetched as asked, as the standard client does. Site isolation is
 * off so same-page iframes share the page's renderer:
 * fewer processes, and their requests count towards networkidle (the address guard does not
 * depend on it; it intercepts at the browser level).
 */
const FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--disable-dev-shm-usage',
  '--remote-debugging-port=0',
  '--remote-debugging-address=127.0.0.1',
  '--no-default-browser-check',
  '--disable-default-apps',
  '--disable-extensions',
  '--disable-breakpad',
  '--disable-crash-reporter',
  '--disable-domain-reliability',
  '--disable-client-side-phishing-detection',
  '--disable-hang-monitor',
  '--disable-renderer-backgrounding',
  '--disable-background-timer-throttling',
  '--disable-backgrounding-occluded-windows',
  '--disable-ipc-flooding-protection',
  '--disable-site-isolation-trials',
  '--disable-features=HttpsUpgrades,HttpsFirstBalancedModeAutoEnable,IsolateOrigins,site-per-process,Translate,OptimizationHints,MediaRouter,DialMediaRouteProvider,AutofillServerCommunication,InterestFeedContentSuggestions,CalculateNativeWinOcclusion',
  '--metrics-recording-only',
  // WebRTC would otherwise send UDP (STUN) wherever a page asks, past the request interceptor.
  '--force-webrtc-ip-handling-policy=disable_non_proxied_udp',
  '--password-store=basic',
  '--use-mock-keychain',
  '--mute-audio',
  '--hide-scrollbars',
  '--log-level=3',
  'about:blank',
]

export type LaunchOptions = {
  /** The guarding proxy (guard-proxy.ts) every connection of the browser goes through. */
  proxy: string
}

/**
 * Every connection through the proxy, loopback too (Chromium bypasses a proxy for loopback
 * unless `<-loopback>` says otherwise), and no name resolved by Chromium itself: through a
 * SOCKS5 or HTTP proxy it sends names on to the proxy, and the resolver rule leaves nothing else (DNS
 * prefetching, a bypass it might still make) a name to connect to. Browser contexts name their
 * own route's listener; these flags cover the default context and anything outside a context.
 */
function networkFlags(proxy: string): string[] {
  return [`--proxy-server=${proxy}`, '--proxy-bypass-list=<-loopback>', '--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1']
}

export type ChromiumProcess = {
  readonly pid: number
  readonly wsUrl: string
  /** The profile directory (inside the launch's own temp directory). */
  readonly userDataDir: string
  /** Resolves once the browser is gone, its process group killed and its temp directory removed. */
  readonly exited: Promise<void>
  readonly alive: () => boolean
  /** Kills the whole process group at once (renderers, zygotes and all). */
  readonly kill: () => void
}

const DIR_PREFIX = 'trawl-chromium-'

const unavailable = (command: string, why: string) => new FetchError('browser_unavailable', `Chromium at "${command}" ${why}; install Chromium or set TRAWL_CHROMIUM to its path`)

/** Resolves a path or a command name on PATH to an executable file, or explains why not. */
export function resolveChromium(command: string): string {
  const path = command.includes('/') ? command : Bun.which(command)
  if (!path) throw unavailable(command, 'was not found on PATH')
  try {
    accessSync(path, constants.X_OK)
  } catch {
    throw unavailable(command, 'does not exist or is not executable')
  }
  return path
}

// Processes still running when Bun exits (a crash, process.exit without close()).
const running = new Set<{ kill: () => void; dir: string }>()
let exitHookInstalled = false
function installExitHook() {
  if (exitHookInstalled) return
  exitHookInstalled = true
  process.on('exit', () => {
    for (const p of running) {
      p.kill()
      try {
        rmSync(p.dir, { recursive: true, force: true })
      } catch {
        // best effort at exit
      }
    }
  })
}

const killGroup = (pid: number, signal: NodeJS.Signals | 0) => {
  try {
    process.kill(-pid, signal)
    return true
  } catch {
    return false
  }
}

/** Processes of a group that are still running (zombies waiting for init to reap them are not). */
function liveMembers(pgid: number): number {
  let n = 0
  let entries: string[]
  try {
    entries = readdirSync('/proc')
  } catch {
    return 0
  }
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8')
      // pid (comm) state ppid pgrp …; comm may hold spaces and parentheses.
      const [state, , pgrp] = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
      if (Number(pgrp) === pgid && state !== 'Z' && state !== 'X') n++
    } catch {
      // gone meanwhile
    }
  }
  return n
}

/**
 * Removes temp directories of earlier launches whose Bun process is gone: killed by a signal,
 * it ran no exit hook (its browser died with it, by the parent-death signal).
 */
async function sweepStale(): Promise<void> {
  let entries: string[]
  try {
    entries = await readdir(tmpdir())
  } catch {
    return
  }
  for (const entry of entries) {
    const owner = new RegExp(`^${DIR_PREFIX}(\\d+)-`).exec(entry)
    if (!owner || Number(owner[1]) === process.pid || pidAlive(Number(owner[1]))) continue // its owner still runs
    await rm(join(tmpdir(), entry), { recursive: true, force: true }).catch(() => {})
  }
}

/**
 * Starts one Chromium and waits for its DevTools endpoint.
 *
 * It runs in its own process group (detached) so one kill reaches every helper process, and,
 * where util-linux `setpriv` exists, with a parent-death signal so a Bun killed with SIGKILL does
 * not leave a browser behind. Its stderr goes to a file, read for the `DevTools listening on`
 * line: a pipe would have to be drained for the browser's whole life and would hold Bun's event
 * loop open.
 */
export async function launchChromium(command: string, log: Logger, opts: LaunchOptions, startTimeoutMs = 15_000): Promise<ChromiumProcess> {
  const path = resolveChromium(command)
  void sweepStale()
  const dir = mkdtempSync(join(tmpdir(), `${DIR_PREFIX}${process.pid}-`))
  const userDataDir = join(dir, 'profile')
  const stderrPath = join(dir, 'stderr.log')
  const setpriv = Bun.which('setpriv')
  const readStderr = () =>
    Bun.file(stderrPath)
      .text()
      .catch(() => '')
  const cmd = [...(setpriv ? [setpriv, '--pdeathsig', 'SIGKILL', '--'] : []), path, ...FLAGS, ...networkFlags(opts.proxy), `--user-data-dir=${userDataDir}`]
  let proc: Bun.Subprocess
  try {
    proc = Bun.spawn({ cmd, stdin: 'ignore', stdout: 'ignore', stderr: Bun.file(stderrPath), detached: true })
  } catch (err) {
    rmSync(dir, { recursive: true, force: true })
    throw unavailable(command, `could not be started (${(err as Error).message})`)
  }
  const pid = proc.pid
  let alive = true
  let wsUrl: string | null = null
  /** Chromium's stderr when it died before it was ready, read before its directory goes. */
  let lastWords = ''
  const kill = () => {
    if (!killGroup(pid, 'SIGKILL')) {
      try {
        proc.kill('SIGKILL')
      } catch {
        // already gone
      }
    }
  }
  const chromium = {
    pid,
    userDataDir,
    dir,
    wsUrl: '',
    alive: () => alive,
    kill,
    exited: proc.exited.then(async (code) => {
      alive = false
      running.delete(chromium)
      if (!wsUrl) lastWords = await readStderr()
      // Helpers can outlive the browser process by a moment; they must not outlive it for good.
      kill()
      for (let i = 0; i < 100 && liveMembers(pid) > 0; i++) await Bun.sleep(20)
      await rm(dir, { recursive: true, force: true, maxRetries: 3, retryDelay: 50 }).catch(() => {})
      log.debug('chromium exited', { pid, code })
    }),
  }
  running.add(chromium)
  installExitHook()

  let gone = false
  void chromium.exited.then(() => (gone = true))
  const deadline = performance.now() + startTimeoutMs
  let stderr = ''
  while (!wsUrl && !gone && performance.now() < deadline) {
    await Bun.sleep(25)
    stderr = await readStderr()
    wsUrl = /DevTools listening on (ws:\/\/\S+)/.exec(stderr)?.[1] ?? null
  }
  if (!wsUrl) {
    const exitCode = proc.exitCode
    kill()
    await chromium.exited
    const detail = (lastWords || stderr)
      .split('\n')
      .filter((l) => l.trim() && !/dbus|unexpected operator/.test(l))
      .slice(-3)
      .join(' | ')
    const why = gone ? `exited with code ${exitCode} before it was ready` : `did not start within ${startTimeoutMs} ms`
    throw unavailable(command, detail ? `${why} (${detail})` : why)
  }
  chromium.wsUrl = wsUrl
  // The process itself does not hold Bun's event loop open. The DevTools WebSocket does, as long
  // as it is connected: Bun's client WebSocket has no unref, so an unused client needs close().
  proc.unref()
  log.info('chromium started', { pid, path })
  return chromium as ChromiumProcess
}
