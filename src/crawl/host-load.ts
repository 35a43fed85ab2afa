/**
 * Requests this process has in flight to each host, over every run it crawls: the per-host
 * ceiling (TRAWL_HOST_CEILING) holds for two runs of one site in one process. Across processes
 * of a shared store the ceiling is kept by the host leases' slots (SharedCrawl.claimHosts).
 */
const inFlight = new Map<string, number>()

/** How many more requests may start to `host` now under `ceiling`. */
export function hostRoom(host: string, ceiling: number): number {
  return ceiling - (inFlight.get(host) ?? 0)
}

export function hostStarted(host: string) {
  inFlight.set(host, (inFlight.get(host) ?? 0) + 1)
}

export function hostEnded(host: string) {
  const n = (inFlight.get(host) ?? 1) - 1
  if (n > 0) inFlight.set(host, n)
  else inFlight.delete(host)
}
