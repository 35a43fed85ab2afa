/**
 * How far a test may trust times a fixture site records on arrival.
 *
 * The site sees when a request arrives, not when the client started it, and on a loaded 2-core
 * machine either side can be descheduled for tens of ms, or paused for a collection: one process on
 * SQLite (no cluster involved), delay 200 ms, load average 5, gave gaps down to 168 ms at the site,
 * and 117 ms with the suite's two workers running other files beside it. A request sent late
 * arrives close to the next one, sent on time.
 */

/**
 * The least gap between two requests to one host that confirms a wait of `delayMs` between them:
 * half of it. What such a test guards against, two holders of one host at once, a delay not kept,
 * a Retry-After not honoured, shows gaps near 0 or near the short default backoff, far below this.
 */
export const gapFloor = (delayMs: number) => delayMs * 0.5
