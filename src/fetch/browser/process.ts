import { accessSync, constants, mkdtempSync, rmSync } from 'node:fs'
import { rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Logger } from '../../log'
import { FetchError } from '../errors'

/**
 * Flags from BUN-NOTES plus the ones that keep a headless browser quiet, offline-safe and cheap
 * on a small machine. Site isolation is off so same-page iframes share the page's renderer:
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
  '--disable-features=IsolateOrigins,site-per-process,Translate,OptimizationHints,MediaRouter,DialMediaRouteProvider,AutofillServerCommunication,InterestFeedContentSuggestions,CalculateNativeWinOcclusion',
  '--metrics-recording-only',
  '--password-store=basic',
  '--use-mock-keychain',
  '--mute-audio',
  '--hide-scrollbars',
  '--log-level=3',
  'about:blank',
]

export type ChromiumProcess = {
  readonly pid: number
  readonly wsUrl: string
  readonly userDataDir: string
  /** Resolves once the browser is gone, its process group killed and its profile removed. */
  readonly exited: Promise<void>
  readonly alive: () => boolean
  /** Kills the whole process group at once (renderers, zygotes and all). */
  readonly kill: () => void
}

const unavailable = (command: string, why: string) =>
  new FetchError('browser_unavailable', `Chromium at "${command}" ${why}; install Chromium or set TRAWL_CHROMIUM to its path`)

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
const running = new Set<{ kill: () => void; userDataDir: string }>()
let exitHookInstalled = false
function installExitHook() {
  if (exitHookInstalled) return
  exitHookInstalled = true
  process.on('exit', () => {
    for (const p of running) {
      p.kill()
      try {
        rmSync(p.userDataDir, { recursive: true, force: true })
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

/**
 * Starts one Chromium and waits for its DevTools endpoint.
 *
 * It runs in its own process group (detached) so one kill reaches every helper process, and,
 * where util-linux `setpriv` exists, with a parent-death signal so a Bun killed with SIGKILL does
 * not leave a browser behind.
 */
export async function launchChromium(command: string, log: Logger, startTimeoutMs = 15_000): Promise<ChromiumProcess> {
  const path = resolveChromium(command)
  const userDataDir = mkdtempSync(join(tmpdir(), 'trawl-chromium-'))
  const setpriv = Bun.which('setpriv')
  const cmd = [...(setpriv ? [setpriv, '--pdeathsig', 'SIGKILL', '--'] : []), path, ...FLAGS, `--user-data-dir=${userDataDir}`]
  let proc: Bun.Subprocess<'ignore', 'ignore', 'pipe'>
  try {
    proc = Bun.spawn({ cmd, stdin: 'ignore', stdout: 'ignore', stderr: 'pipe', detached: true })
  } catch (err) {
    rmSync(userDataDir, { recursive: true, force: true })
    throw unavailable(command, `could not be started (${(err as Error).message})`)
  }
  const pid = proc.pid
  let alive = true
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
    wsUrl: '',
    alive: () => alive,
    kill,
    exited: proc.exited.then(async (code) => {
      alive = false
      running.delete(chromium)
      // Helpers can outlive the browser process by a moment; they must not outlive it for good.
      kill()
      for (let i = 0; i < 100 && killGroup(pid, 0); i++) await Bun.sleep(20)
      await rm(userDataDir, { recursive: true, force: true, maxRetries: 3, retryDelay: 50 }).catch(() => {})
      log.debug('chromium exited', { pid, code })
    }),
  }
  running.add(chromium)
  installExitHook()

  // Chromium writes to stderr for its whole life: keep draining it, or it blocks on a full pipe.
  const tail: string[] = []
  let wsUrl: string | null = null
  let announce: (url: string) => void = () => {}
  const announced = new Promise<string>((resolve) => (announce = resolve))
  void (async () => {
    const decoder = new TextDecoder()
    let partial = ''
    try {
      for await (const chunk of proc.stderr) {
        const lines = (partial + decoder.decode(chunk, { stream: true })).split('\n')
        partial = lines.pop() ?? ''
        for (const line of lines) {
          const m = /DevTools listening on (ws:\/\/\S+)/.exec(line)
          if (m && !wsUrl) announce((wsUrl = m[1]!))
          else if (line.trim()) {
            tail.push(line)
            if (tail.length > 20) tail.shift()
          }
        }
      }
    } catch {
      // the pipe closes with the process
    }
  })()

  let timer: ReturnType<typeof setTimeout> | undefined
  const outcome = await Promise.race([
    announced,
    chromium.exited.then(() => null),
    new Promise<'timeout'>((resolve) => (timer = setTimeout(() => resolve('timeout'), startTimeoutMs))),
  ])
  clearTimeout(timer)
  if (outcome === null || outcome === 'timeout') {
    kill()
    await chromium.exited
    const detail = tail.filter((l) => !/dbus|unexpected operator/.test(l)).slice(-3).join(' | ')
    const why = outcome === null ? `exited with code ${proc.exitCode} before it was ready` : `did not start within ${startTimeoutMs} ms`
    throw unavailable(command, detail ? `${why} (${detail})` : why)
  }
  chromium.wsUrl = outcome
  // An idle browser alone must not keep the service's event loop running.
  proc.unref()
  log.info('chromium started', { pid, path })
  return chromium as ChromiumProcess
}
