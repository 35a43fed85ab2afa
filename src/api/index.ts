import type { Route } from '../http/route'
import type { Deps } from './deps'
import { hostRoutes } from './hosts'
import { jobRoutes } from './jobs'
import { linkRoutes } from './links'
import { runRoutes } from './runs'
import { crawlLogRoutes } from './crawl-logs'
import { patternRoutes } from './patterns'
import { dataMapRoutes } from './data-maps'
import { parseRoutes } from './parse'
import { fetchRoutes } from './fetch'
import { runGraphRoutes } from './run-graph'
import { exportRoutes } from './export'
import { artifactRoutes } from './artifacts'
import { triggerRoutes } from './triggers'
import { paymentRoutes } from './payments'
import { webhookRoutes } from './webhooks'

/** Every management route, in the order the docs list them. */
export const managementRoutes = (deps: Deps): Route[] => [
  ...jobRoutes(deps),
  ...runRoutes(deps),
  ...triggerRoutes(deps),
  ...webhookRoutes(deps),
  ...hostRoutes(deps),
  ...linkRoutes(deps),
  ...crawlLogRoutes(deps),
  ...runGraphRoutes(deps),
  ...exportRoutes(deps),
  ...patternRoutes(deps),
  ...dataMapRoutes(deps),
  ...parseRoutes(deps),
  ...fetchRoutes(deps),
  ...artifactRoutes(deps),
  ...paymentRoutes(deps),
]
