/**
 * Why a fetch got no answer from its target (design.md §6). Each code has one HTTP status on the
 * management API; the scrape API answers all of them with 500 and the same body.
 */
export const FETCH_ERROR_STATUS = {
  timeout: 504,
  dns: 502,
  connect: 502,
  tls: 502,
  too_large: 502,
  redirect_limit: 502,
  proxy: 502,
  rejected: 502,
  bad_response: 502,
  blocked_address: 403,
  browser_unavailable: 503,
} as const
export type FetchErrorCode = keyof typeof FETCH_ERROR_STATUS

export class FetchError extends Error {
  constructor(
    readonly code: FetchErrorCode,
    message: string,
    /** Whether another attempt could succeed (network failures yes, policy refusals no). */
    readonly retryable = false,
  ) {
    super(message)
  }
  get status(): number {
    return FETCH_ERROR_STATUS[this.code]
  }
}
