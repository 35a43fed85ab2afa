import { frontier, runs, tenantLabel } from '../metrics'
import type { Collector } from '../metrics/registry'
import { RUN_STATUSES } from '../store/runs'
import type { Store } from '../store/types'

/**
 * The runs gauges of /metrics, read from the store at each scrape (RunStore.census): runs by
 * status and the URLs queued in unfinished runs, over every tenant. With PostgreSQL every process
 * reads the same database and shows the same values. Every status of every tenant shown is there,
 * at 0 when it has no runs, so a graph of one does not stop when its last run moves on.
 */
export function runGauges(store: Store): Collector {
  return async () => {
    const census = await store.runs.census()
    runs.reset()
    frontier.reset()
    const tenants = new Set(census.map((c) => tenantLabel(c.tenant)))
    if (tenants.size === 0) tenants.add('')
    for (const t of tenants) {
      for (const status of RUN_STATUSES) runs.labels(t, status).set(0)
      frontier.labels(t).set(0)
    }
    for (const c of census) {
      runs.labels(tenantLabel(c.tenant), c.status).inc(c.runs)
      frontier.labels(tenantLabel(c.tenant)).inc(c.queued)
    }
  }
}
