import { fetchableScheme, literalChecked } from './address-guard'
import { readCapped } from './body'
import { FetchError } from './errors'
import { exchange } from './standard'

/** How long a receiver has to answer, headers and body. */
export const WEBHOOK_TIMEOUT_MS = 10_000
/** A receiver's answer is read this far, to let its connection be reused, and dropped. */
const MAX_ANSWER_BYTES = 64 * 1024

export type WebhookPost = { url: string; headers: Record<string, string>; body: string; allowPrivate: boolean; timeoutMs?: number }
/** A 2xx is delivered (`error` null); anything else is a failed attempt, with why. */
export type WebhookAnswer = { status_code: number | null; error: string | null }

/**
 * One webhook request (decision 116): the stored bytes POSTed to the receiver through the address
 * guard, pinned to the checked address as every target fetch is, without a proxy. A redirect is
 * not followed: it is a failed attempt, as a receiver that moved must be told at its new URL.
 */
export async function postWebhook(p: WebhookPost): Promise<WebhookAnswer> {
  const signal = AbortSignal.timeout(p.timeoutMs ?? WEBHOOK_TIMEOUT_MS)
  let url: URL
  try {
    url = new URL(p.url)
  } catch {
    return { status_code: null, error: `${p.url} is not a URL` }
  }
  try {
    const { response } = await exchange({ url, method: 'POST', headers: new Headers(p.headers), body: new TextEncoder().encode(p.body), proxy: null, allowPrivate: p.allowPrivate, signal })
    // Read (up to the bound) and dropped: the status is what counts, and a body cut short changes nothing.
    await readCapped(response, MAX_ANSWER_BYTES, signal).catch(() => {})
    const status = response.status
    if (status >= 200 && status < 300) return { status_code: status, error: null }
    if (status >= 300 && status < 400)
      return { status_code: status, error: `redirected (${status}${response.headers.get('location') ? ` to ${response.headers.get('location')}` : ''}); redirects are not followed` }
    return { status_code: status, error: `answered ${status}` }
  } catch (err) {
    if (signal.aborted) return { status_code: null, error: `no answer within ${(p.timeoutMs ?? WEBHOOK_TIMEOUT_MS) / 1000} s` }
    return { status_code: null, error: err instanceof FetchError ? err.message : String((err as Error)?.message ?? err) }
  }
}

/**
 * Why a webhook URL cannot be used (a 422 message), or null: http or https only, and no literal
 * private address unless private networks are allowed. A name is checked at each delivery, when
 * it is resolved.
 */
export function webhookUrlError(text: string, allowPrivate: boolean): string | null {
  let url: URL
  try {
    url = new URL(text)
  } catch {
    return 'must be an absolute http or https URL'
  }
  if (!fetchableScheme(url)) return 'must be an http or https URL'
  if (url.username || url.password) return 'must not carry credentials'
  try {
    literalChecked(url.hostname, allowPrivate)
  } catch (err) {
    return (err as Error).message
  }
  return null
}
