/**
 * The runtime's fetch, for a service the operator configured (the x402 facilitator) rather than
 * a crawl or scrape target: no address guard, proxy, user agent or retry of the target fetcher
 * applies to it. It is named here so that every network call trawl makes starts in src/fetch.
 */
export const serviceFetch: typeof fetch = fetch
