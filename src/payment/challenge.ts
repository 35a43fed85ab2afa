import type { PayNetwork } from './networks'
import type { Refusal } from './reasons'
import { encodeJsonHeader, HEADERS, type Version } from './wire'

/** What this server sells a request for: fixed at start from the config. */
export type Terms = {
  network: PayNetwork
  /** Checksummed. */
  payTo: `0x${string}`
  /** The price in USDC atomic units. */
  amount: string
  maxTimeoutSeconds: number
}

// ASCII only: x402@1.2.0 encodes headers with a bare btoa, which takes Latin-1 only.
const DESCRIPTION = 'Scrape one URL'
const MIME_TYPE = 'application/json'

/**
 * v1 PaymentRequirements, as x402@1.2.0's zod schema accepts them: mimeType present, resource
 * absolute, no `outputSchema: null`, the network from its enum.
 */
const requirementsV1 = (t: Terms, resource: string) => ({
  scheme: 'exact' as const,
  network: t.network.v1,
  maxAmountRequired: t.amount,
  resource,
  description: DESCRIPTION,
  mimeType: MIME_TYPE,
  payTo: t.payTo,
  maxTimeoutSeconds: t.maxTimeoutSeconds,
  asset: t.network.asset,
  extra: { name: t.network.name, version: t.network.version },
})

/** v2 PaymentRequirements: CAIP-2 network and `amount`; the resource moves to the envelope. */
const requirementsV2 = (t: Terms) => ({
  scheme: 'exact' as const,
  network: t.network.v2,
  amount: t.amount,
  asset: t.network.asset,
  payTo: t.payTo,
  maxTimeoutSeconds: t.maxTimeoutSeconds,
  extra: { name: t.network.name, version: t.network.version },
})

/** The requirements a payment of this version was checked against (what a facilitator is sent). */
export const requirementsFor = (version: Version, t: Terms, resource: string) => (version === 1 ? requirementsV1(t, resource) : requirementsV2(t))

/**
 * The 402 both client generations can pay (docs/payments.md, "The challenge"): the v1 body,
 * which x402-fetch 1.x reads, and the v2 PaymentRequired in PAYMENT-REQUIRED, which
 * @x402/fetch 2.x prefers. The body also has the `message` every scrape error body has.
 */
export function challengeResponse(t: Terms, resource: string, why: Refusal, headers: Record<string, string> = {}): Response {
  const v2 = {
    x402Version: 2,
    error: why.v2,
    resource: { url: resource, description: DESCRIPTION, mimeType: MIME_TYPE },
    accepts: [requirementsV2(t)],
    extensions: {},
  }
  const body = { x402Version: 1, error: why.v1, message: why.message, accepts: [requirementsV1(t, resource)] }
  return Response.json(body, {
    status: 402,
    headers: { 'Cache-Control': 'no-store', 'PAYMENT-REQUIRED': encodeJsonHeader(v2), ...headers },
  })
}

/** A settlement response (docs/payments.md, "Paying"). `transaction` is empty when nothing was settled on chain. */
export type Receipt = { success: boolean; transaction: string; network: string; payer: string; errorReason?: string }

/** The receipt header answering a payment of this version. */
export const receiptHeader = (version: Version, receipt: Receipt): Record<string, string> => ({ [HEADERS[version].receipt]: encodeJsonHeader(receipt) })

/** The network as a receipt of this version names it. */
export const networkName = (version: Version, t: Terms) => (version === 1 ? t.network.v1 : t.network.v2)
