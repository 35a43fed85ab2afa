/**
 * `promise`, or a rejection (the signal's reason, or `error()`) as soon as the signal aborts:
 * for work that cannot be cancelled, such as a DNS lookup, which the caller stops waiting for.
 */
export function untilAborted<T>(promise: Promise<T>, signal: AbortSignal, error: () => unknown = () => signal.reason): Promise<T> {
  if (signal.aborted) return Promise.reject(error())
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(error())
    signal.addEventListener('abort', onAbort, { once: true })
    promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort))
  })
}
