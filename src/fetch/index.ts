import type { Config } from '../config'
import type { Logger } from '../log'
import { BrowserClient } from './browser'
import { Fetcher } from './fetcher'

/** The process's fetcher, configured from the settings (design.md §1). */
export function createFetcher(config: Config, log: Logger, extra: { ca?: string } = {}): Fetcher {
  return new Fetcher({
    allowPrivate: config.allowPrivateNetworks,
    proxies: config.proxies,
    maxBodyBytes: config.maxBodyBytes,
    log,
    browser: new BrowserClient({ chromium: config.chromium, allowPrivate: config.allowPrivateNetworks, maxBodyBytes: config.maxBodyBytes, log }),
    ca: extra.ca,
  })
}
