import { FetchError, type FetchErrorCode } from '../fetch/errors'
import type { LogReason } from './page-batch'

/** Fetch error codes as crawl log error reasons (design.md §5 lists the reasons). */
const FETCH_REASON: Record<FetchErrorCode, LogReason> = {
  timeout: 'timeout',
  dns: 'dns',
  connect: 'connect',
  tls: 'tls',
  too_large: 'too_large',
  redirect_limit: 'redirect_limit',
  proxy: 'connect',
  rejected: 'http_status',
  bad_response: 'connect',
  blocked_address: 'blocked_address',
  browser_unavailable: 'connect',
}

/** A fetch's failure as a crawl log reason and detail. */
export function reasonOf(err: unknown): { error_reason: LogReason; error_detail: string } {
  if (err instanceof FetchError) return { error_reason: FETCH_REASON[err.code], error_detail: err.message }
  return { error_reason: 'connect', error_detail: String((err as Error)?.message ?? err) }
}
