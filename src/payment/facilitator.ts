import { isObject } from './wire'
import { readCapped } from '../fetch/body'
import { serviceFetch } from '../fetch/service'

/** How long one facilitator call may take: /settle waits for the transaction's receipt, a few seconds on Base. */
const FACILITATOR_TIMEOUT_MS = 10_000
// A verify or settle answer is a few hundred bytes.
const MAX_ANSWER_BYTES = 64 * 1024

/** The body of POST /verify and POST /settle (docs/payments.md, "Facilitator mode"). */
export type FacilitatorRequest = { x402Version: 1 | 2; paymentPayload: object; paymentRequirements: object }

/** A call that got no usable answer; the message is one line for the log, never a stack. */
export class FacilitatorError extends Error {}

/** A facilitator's answer as an object; a 4xx/5xx that still carries JSON (a settle failure often does) is an answer too. */
type Answer = { status: number; body: Record<string, unknown> }

/**
 * A client of an x402 facilitator's HTTP API. The facilitator is the operator's own choice of
 * service, so it is called directly rather than through the target fetcher and its address guard.
 */
export function facilitatorClient(baseUrl: string, fetchFn: typeof fetch = serviceFetch, timeoutMs = FACILITATOR_TIMEOUT_MS) {
  async function post(path: '/verify' | '/settle', body: FacilitatorRequest): Promise<Answer> {
    // One deadline for the request and the reading of its answer.
    const signal = AbortSignal.timeout(timeoutMs)
    let response: Response
    try {
      response = await fetchFn(`${baseUrl}${path}`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', Accept: 'application/json' },
        body: JSON.stringify(body),
        redirect: 'error',
        signal,
      })
    } catch (err) {
      throw new FacilitatorError(`${path}: ${describeFailure(err, timeoutMs)}`)
    }
    let text: string
    try {
      text = new TextDecoder().decode(await readCapped(response, MAX_ANSWER_BYTES, signal))
    } catch (err) {
      throw new FacilitatorError(`${path}: HTTP ${response.status}, ${describeFailure(err, timeoutMs)}`)
    }
    let parsed: unknown
    try {
      parsed = JSON.parse(text)
    } catch {
      throw new FacilitatorError(`${path}: HTTP ${response.status} with a body that is not JSON`)
    }
    if (!isObject(parsed)) throw new FacilitatorError(`${path}: HTTP ${response.status} with a body that is not a JSON object`)
    return { status: response.status, body: parsed }
  }

  return {
    /** POST /verify; `isValid` false comes back with the facilitator's reason. */
    async verify(body: FacilitatorRequest): Promise<{ isValid: boolean; reason?: unknown }> {
      const answer = await post('/verify', body)
      if (typeof answer.body.isValid !== 'boolean') throw new FacilitatorError(`/verify: HTTP ${answer.status} without isValid`)
      return { isValid: answer.status === 200 && answer.body.isValid, reason: answer.body.invalidReason }
    },
    /** POST /settle; success only with HTTP 200, `success: true` and a transaction hash. */
    async settle(body: FacilitatorRequest): Promise<{ success: true; transaction: string } | { success: false; reason?: unknown }> {
      const answer = await post('/settle', body)
      const { success, transaction, errorReason } = answer.body
      if (typeof success !== 'boolean') throw new FacilitatorError(`/settle: HTTP ${answer.status} without success`)
      if (answer.status === 200 && success && typeof transaction === 'string' && /^0x[0-9a-fA-F]{1,128}$/.test(transaction)) return { success: true, transaction }
      return { success: false, reason: errorReason }
    },
  }
}
export type FacilitatorClient = ReturnType<typeof facilitatorClient>

function describeFailure(err: unknown, timeoutMs: number): string {
  const e = err as { name?: string; code?: string; message?: string }
  if (e?.name === 'TimeoutError' || e?.name === 'AbortError') return `no answer within ${timeoutMs} ms`
  if (typeof e?.code === 'string') return e.code
  return String(e?.message ?? err)
    .split('\n')[0]!
    .slice(0, 200)
}
