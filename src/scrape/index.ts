import type { Route } from '../http/route'

/**
 * The scrape surface (SPEC "Scrape API"). It listens on its own port from the first release so
 * the start-up contract holds; its routes arrive with the scrape issue.
 */
export const scrapeRoutes = (): Route[] => []
