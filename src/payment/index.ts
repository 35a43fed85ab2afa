import { getAddress, isAddress } from 'viem'
import { ConfigError, type Config } from '../config'
import type { Logger } from '../log'
import { paymentRefusals, payments } from '../metrics'
import type { PaymentStore } from '../store/types'
import { challengeResponse, networkName, receiptHeader, requirementsFor, type Terms } from './challenge'
import { FacilitatorError, facilitatorClient, type FacilitatorClient, type FacilitatorRequest } from './facilitator'
import { atomicToUsd, usdToAtomic } from './money'
import { payNetwork } from './networks'
import { foreignRefusal, refusal, type Reason } from './reasons'
import { AuthorizationVerifier } from './signature'
import { verifyPayment, type Verified } from './verify'
import { HEADERS, paymentHeader, type Version } from './wire'

/** A payment that was verified and entered in the ledger as `accepted`; hand it back to `settle`. */
export type Admitted = {
  readonly key: string
  readonly version: Version
  /** Checksummed payer address. */
  readonly payer: string
  /** Authorized value, USDC atomic units. */
  readonly amount: string
  readonly resource: string
  readonly payload: Record<string, unknown>
  readonly requirements: Record<string, unknown>
}

/** A payment that passed the local checks (docs/payments.md, steps 1-5) and is not recorded yet. */
export type Checked = { readonly payer: string; readonly resource: string; readonly verified: Verified }

/** The scrape API's payment check: challenge, verify, ledger, settle (docs/payments.md). */
export interface PaymentGate {
  /**
   * The local checks, with no side effect: a ready 402 (no payment, or an invalid one: `error`
   * holds the reason), or the checked payment with its (verified) payer. The scrape API applies
   * its per-payer rate limit between this and `record`, so a 429 never consumes a payment and a
   * payer's bucket is only ever charged with that payer's own signatures. A refusal is counted
   * (`countRefusal`) by whoever answers it: the 402 may yet give way to a 429.
   */
  check(request: Request, resource: string): Promise<{ ok: false; response: Response; reason: Reason } | { ok: true; checked: Checked }>
  /** Records a checked payment (the replay guard: a 402 when it was used already) and, with a facilitator, verifies it there. */
  record(checked: Checked): Promise<{ ok: false; response: Response } | { ok: true; payment: Admitted }>
  /** `check`, then `record`. */
  admit(request: Request, resource: string): Promise<{ ok: false; response: Response } | { ok: true; payment: Admitted }>
  /**
   * After the scrape. Not succeeded: row `handler_failed`, nothing settled, no headers. Succeeded:
   * the receipt headers to add (row `served`, or `settled` through a facilitator), or, when the
   * facilitator's settlement failed, a 402 that replaces the result (row `settle_failed`).
   */
  settle(payment: Admitted, succeeded: boolean): Promise<{ headers: Record<string, string> } | { response: Response }>
  /** One line for the start-up message: price, network, pay-to address and settlement mode. */
  describe(): string
}

export type PaymentGateOptions = {
  /** Clock in epoch ms (tests move it). */
  now?: () => number
  /** The facilitator's transport (tests may wrap it). */
  fetch?: typeof fetch
  facilitatorTimeoutMs?: number
}

/** The payment gate of the scrape API; null when no pay-to address is configured and scraping is free. */
export function createPaymentGate(config: Config, ledger: PaymentStore, log: Logger, opts: PaymentGateOptions = {}): PaymentGate | null {
  if (!config.payTo) return null
  // config.ts checks the shape only; a mixed-case address with a wrong checksum is most likely a typo.
  if (!isAddress(config.payTo, { strict: true })) throw new ConfigError(`TRAWL_PAY_TO: "${config.payTo}" fails its EIP-55 checksum; check the address, or write it in lower case`)
  const terms: Terms = {
    network: payNetwork(config.payNetwork),
    payTo: getAddress(config.payTo),
    amount: usdToAtomic(config.price),
    maxTimeoutSeconds: Math.max(1, Math.ceil(config.payMaxTimeoutMs / 1000)),
  }
  const now = opts.now ?? Date.now
  const facilitator = config.facilitatorUrl ? facilitatorClient(config.facilitatorUrl, opts.fetch, opts.facilitatorTimeoutMs) : null
  return new Gate(terms, ledger, facilitator, config.facilitatorUrl, log, now)
}

class Gate implements PaymentGate {
  private readonly verifier: AuthorizationVerifier

  /**
   * `ledger` answers each write once it is committed; the SQLite engine group-commits the writes
   * of requests in flight together (decision 77).
   */
  constructor(
    private readonly terms: Terms,
    private readonly ledger: PaymentStore,
    private readonly facilitator: FacilitatorClient | null,
    private readonly facilitatorUrl: string | null,
    private readonly log: Logger,
    private readonly now: () => number,
  ) {
    this.verifier = new AuthorizationVerifier(terms.network)
  }

  async admit(request: Request, resource: string) {
    const checked = await this.check(request, resource)
    if (checked.ok) return this.record(checked.checked)
    countRefusal(checked.reason)
    return checked
  }

  async check(request: Request, resource: string) {
    const header = paymentHeader(request.headers)
    if (!header) return { ok: false as const, response: challengeResponse(this.terms, resource, refusal('payment_required')), reason: 'payment_required' as const }
    const checked = verifyPayment(header.version, header.text, this.terms, this.now(), this.verifier)
    if (!checked.ok) {
      this.log.debug('payment refused', { reason: checked.reason, header: HEADERS[header.version].payment })
      return { ok: false as const, response: challengeResponse(this.terms, resource, refusal(checked.reason)), reason: checked.reason }
    }
    return { ok: true as const, checked: { payer: checked.payment.payer, resource, verified: checked.payment } }
  }

  async record({ resource, verified: v }: Checked) {
    const requirements = requirementsFor(v.version, this.terms, resource)
    const accepted = await this.ledger.accept({
      key: v.key,
      payer: v.payer,
      amount: v.value,
      network: this.terms.network.v1,
      version: v.version,
      payload: v.payload,
      requirements,
      validBefore: v.validBefore,
      resource,
    })
    if (!accepted) {
      this.log.info('payment replayed', { payer: v.payer, key: v.key })
      countRefusal('duplicate_settlement')
      return { ok: false as const, response: challengeResponse(this.terms, resource, refusal('duplicate_settlement')) }
    }
    const payment: Admitted = { key: v.key, version: v.version, payer: v.payer, amount: v.value, resource, payload: v.payload, requirements }
    if (this.facilitator) {
      const refused = await this.verifyWithFacilitator(payment)
      if (refused) return { ok: false as const, response: refused }
    }
    payments.labels('accepted').inc()
    return { ok: true as const, payment }
  }

  /**
   * Moves the row out of `accepted`. A database failure here (busy past its timeout, full) must
   * not turn a scrape that was served, or settled on chain, into an error for the payer: it is
   * logged, and the row stays `accepted`, which an operator reads as unknown.
   */
  private async mark(payment: Admitted, to: 'served' | 'handler_failed' | 'settled' | 'settle_failed', extra?: { tx?: string; error?: string }) {
    payments.labels(to).inc()
    try {
      await this.ledger.mark(payment.key, 'accepted', to, extra)
    } catch (err) {
      this.log.error('payment ledger update failed; the row stays accepted', { key: payment.key, to, error: String(err) })
    }
  }

  /** Local checks passed; the facilitator also knows balances and on-chain nonces. A refusal releases the ledger row. */
  private async verifyWithFacilitator(payment: Admitted): Promise<Response | null> {
    let why
    // The facilitator's own reason is passed on to the payer; the metric keeps ours, a bounded set.
    let reason: Reason = 'invalid_payment'
    try {
      const answer = await this.facilitator!.verify(facilitatorRequest(payment))
      if (answer.isValid) return null
      why = foreignRefusal(answer.reason, 'invalid_payment')
      this.log.info('payment refused by the facilitator', { payer: payment.payer, reason: why.v1 })
    } catch (err) {
      why = refusal('unexpected_verify_error')
      reason = 'unexpected_verify_error'
      this.log.warn('facilitator verify failed', { error: err instanceof FacilitatorError ? err.message : String(err) })
    }
    await this.ledger.release(payment.key)
    countRefusal(reason)
    return challengeResponse(this.terms, payment.resource, why)
  }

  async settle(payment: Admitted, succeeded: boolean) {
    if (!succeeded) {
      await this.mark(payment, 'handler_failed')
      return { headers: {} }
    }
    const receipt = { network: networkName(payment.version, this.terms), payer: payment.payer }
    if (!this.facilitator) {
      await this.mark(payment, 'served')
      // Nothing was settled on chain: the authorization waits in the ledger, so the transaction is empty.
      return { headers: { ...receiptHeader(payment.version, { success: true, transaction: '', ...receipt }), 'Cache-Control': 'private' } }
    }
    let failure
    try {
      const settled = await this.facilitator.settle(facilitatorRequest(payment))
      if (settled.success) {
        await this.mark(payment, 'settled', { tx: settled.transaction })
        return { headers: { ...receiptHeader(payment.version, { success: true, transaction: settled.transaction, ...receipt }), 'Cache-Control': 'private' } }
      }
      failure = foreignRefusal(settled.reason, 'unexpected_settle_error')
      this.log.warn('settlement refused', { payer: payment.payer, reason: failure.v1 })
    } catch (err) {
      failure = refusal('unexpected_settle_error')
      this.log.warn('facilitator settle failed', { payer: payment.payer, error: err instanceof FacilitatorError ? err.message : String(err) })
    }
    await this.mark(payment, 'settle_failed', { error: failure.v1 })
    const failed = receiptHeader(payment.version, { success: false, errorReason: payment.version === 1 ? failure.v1 : failure.v2, transaction: '', ...receipt })
    return { response: challengeResponse(this.terms, payment.resource, failure, failed) }
  }

  describe(): string {
    const t = this.terms
    const mode = this.facilitatorUrl ? `settled through ${withoutCredentials(this.facilitatorUrl)}` : 'verified locally, authorizations wait in the ledger (trawl payments)'
    return `paid: ${atomicToUsd(t.amount)} per request on ${t.network.v1} to ${t.payTo}, ${mode}`
  }
}

/** Counts a 402 by our reason for it (trawl_payment_refusals_total). */
export const countRefusal = (reason: Reason) => paymentRefusals.labels(reason).inc()

const facilitatorRequest = (p: Admitted): FacilitatorRequest => ({ x402Version: p.version, paymentPayload: p.payload, paymentRequirements: p.requirements })

// The start-up line is logged and shown; a facilitator URL may carry a key in its user-info.
function withoutCredentials(url: string): string {
  const u = new URL(url)
  u.username = ''
  u.password = ''
  return u.href.replace(/\/$/, '')
}
