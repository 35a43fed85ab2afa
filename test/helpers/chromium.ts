import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Cdp } from '../../src/fetch/browser/cdp'
import { waitFor } from './wait'

/**
 * A headless Chromium driven over the DevTools protocol (the crawler's own connection,
 * src/fetch/browser/cdp.ts), for tests of the dashboard and the screenshots script: one page,
 * with what a test does to it (go, click, type, read, wait) as page-side expressions. Errors the
 * page logs or throws (not the network's: an API's 422 is an answer the page shows) are collected
 * in `errors`.
 */
export async function openBrowser(opts: { width?: number; height?: number } = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'trawl-dashboard-chromium-'))
  const proc = Bun.spawn(
    [
      process.env.TRAWL_CHROMIUM ?? '/usr/bin/chromium',
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-dev-shm-usage',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-extensions',
      '--hide-scrollbars',
      '--remote-debugging-port=0',
      '--remote-debugging-address=127.0.0.1',
      `--user-data-dir=${dir}`,
      'about:blank',
    ],
    { stdin: 'ignore', stdout: 'ignore', stderr: 'pipe' },
  )
  let stderr = ''
  const reader = (async () => {
    const decoder = new TextDecoder()
    for await (const chunk of proc.stderr) stderr += decoder.decode(chunk, { stream: true })
  })().catch(() => {})
  const wsUrl = await waitFor('Chromium to listen for DevTools', () => /DevTools listening on (ws:\/\/\S+)/.exec(stderr)?.[1], 15_000, 25)
  const cdp = await Cdp.connect(wsUrl, 5_000)
  const { targetId } = await cdp.send('Target.createTarget', { url: 'about:blank' })
  const { sessionId } = await cdp.send('Target.attachToTarget', { targetId, flatten: true })
  const send = <T = any>(method: string, params: Record<string, unknown> = {}) => cdp.send<T>(method, params, sessionId)
  const errors: string[] = []
  cdp.on(sessionId, (e) => {
    if (e.method === 'Runtime.exceptionThrown') errors.push(e.params.exceptionDetails?.exception?.description ?? e.params.exceptionDetails?.text)
    if (e.method === 'Runtime.consoleAPICalled' && e.params.type === 'error') errors.push(e.params.args.map((a: any) => a.value ?? a.description).join(' '))
    // Network entries are the API's error answers (a 422 the page shows), not the page's failures.
    if (e.method === 'Log.entryAdded' && e.params.entry.level === 'error' && e.params.entry.source !== 'network') errors.push(`${e.params.entry.text} ${e.params.entry.url ?? ''}`)
  })
  await Promise.all([send('Page.enable'), send('Runtime.enable'), send('Log.enable')])

  /** A page-side expression's value (awaited when it is a promise); a throw in the page fails here. */
  const evaluate = async <T = any>(expression: string): Promise<T> => {
    const r = await send('Runtime.evaluate', { expression, awaitPromise: true, returnByValue: true })
    if (r.exceptionDetails) throw new Error(`in the page: ${r.exceptionDetails.exception?.description ?? r.exceptionDetails.text}\n  evaluating ${expression}`)
    return r.result.value as T
  }
  const q = (selector: string) => `document.querySelector(${JSON.stringify(selector)})`
  const page = {
    errors,
    send,
    evaluate,
    async size(width: number, height: number, mobile = false) {
      await send('Emulation.setDeviceMetricsOverride', { width, height, deviceScaleFactor: 1, mobile })
    },
    async goto(url: string) {
      await send('Page.navigate', { url })
      await waitFor(`${url} to load`, () => evaluate<boolean>(`document.readyState === 'complete'`), 10_000, 20)
    },
    /** Waits until the expression is truthy in the page; answers its value. */
    waitFor: <T = any>(what: string, expression: string, timeoutMs = 10_000) => waitFor(what, () => evaluate<T>(expression), timeoutMs, 25),
    /** Waits for an element matching `selector` (and, when given, whose text holds `text`), then clicks it. */
    async click(selector: string, text?: string) {
      const find = `[...document.querySelectorAll(${JSON.stringify(selector)})].find((e) => ${text === undefined ? 'true' : `e.textContent.includes(${JSON.stringify(text)})`})`
      await page.waitFor(`${selector}${text ? ` "${text}"` : ''} to click`, `!!${find}`)
      await evaluate(`${find}.click()`)
    },
    /** Sets an input's, textarea's or select's value as typing would, firing input and change. */
    async fill(selector: string, value: string) {
      await page.waitFor(`${selector} to fill`, `!!${q(selector)}`)
      await evaluate(`(() => {
        const el = ${q(selector)}
        const proto = el instanceof HTMLTextAreaElement ? HTMLTextAreaElement : el instanceof HTMLSelectElement ? HTMLSelectElement : HTMLInputElement
        Object.getOwnPropertyDescriptor(proto.prototype, 'value').set.call(el, ${JSON.stringify(value)})
        el.dispatchEvent(new Event('input', { bubbles: true }))
        el.dispatchEvent(new Event('change', { bubbles: true }))
      })()`)
    },
    text: (selector: string) => evaluate<string | null>(`${q(selector)}?.textContent ?? null`),
    texts: (selector: string) => evaluate<string[]>(`[...document.querySelectorAll(${JSON.stringify(selector)})].map((e) => e.textContent)`),
    async screenshot(path: string) {
      const { data } = await send<{ data: string }>('Page.captureScreenshot', { format: 'png', captureBeyondViewport: false })
      await Bun.write(path, Buffer.from(data, 'base64'))
    },
    async close() {
      cdp.close()
      proc.kill('SIGKILL')
      await proc.exited
      await reader
      rmSync(dir, { recursive: true, force: true })
    },
  }
  return page
}

export type BrowserPage = Awaited<ReturnType<typeof openBrowser>>
