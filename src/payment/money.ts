/** USDC has 6 decimals on every network we accept. */
const USDC_DECIMALS = 6
const SCALE = 10n ** BigInt(USDC_DECIMALS)

/**
 * A USD amount as config holds it (`0.001`, `1`, `.5`; at most 6 decimals) to USDC atomic units
 * (`"1000"`), in integers so no float rounding can move the price.
 */
export function usdToAtomic(usd: string): string {
  const m = /^\$?(\d*)(?:\.(\d{1,6}))?$/.exec(usd.trim())
  if (!m || (m[1] === '' && m[2] === undefined)) throw new Error(`not a USD amount: ${usd}`)
  return (BigInt(m[1] || '0') * SCALE + BigInt((m[2] ?? '').padEnd(USDC_DECIMALS, '0'))).toString()
}

/** Atomic units to a USD string with no trailing zeros: `"1000"` → `"$0.001"`. */
export function atomicToUsd(atomic: string): string {
  const n = BigInt(atomic)
  const frac = (n % SCALE).toString().padStart(USDC_DECIMALS, '0').replace(/0+$/, '')
  return `$${n / SCALE}${frac ? `.${frac}` : ''}`
}
