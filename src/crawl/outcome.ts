import { sortedCounts } from '../core/counts'
import type { RunOutcome, StopReason } from '../store/runs'

/** What the engine knows when a run finishes, beyond its stop reason. */
export type Ending = {
  /** The run ended after max_empty_evaluations empty looks with URLs still queued. */
  stalled: boolean
  /** At least one URL of the run was answered below 400. */
  pageFetched: boolean
}

/**
 * A finished run's outcome (docs/crawl.md, "Outcomes"): SPEC's stop reason says which rule
 * ended the run, and a complete crawl and a stalled one share `max_empty_evaluations`, while a
 * run whose every seed failed ended like a complete one. The first that holds wins.
 */
export function runOutcome(reason: StopReason, ending: Ending): RunOutcome {
  if (reason === 'manual') return 'stopped'
  if (reason === 'unknown' || reason === 'empty_seed' || !ending.pageFetched) return 'failed'
  if (ending.stalled) return 'stalled'
  if (reason === 'max_urls' || reason === 'max_age' || reason === 'max_depth') return 'limited'
  return 'complete'
}

/** A run's failed URLs by reason (`http_<status>` for answers of 400 or more), saved with its counters when they changed. */
export class ErrorTally {
  private readonly counts: Map<string, number>
  changed = false

  constructor(saved: Record<string, number>) {
    this.counts = new Map(Object.entries(saved))
  }

  add(reason: string, n = 1) {
    if (n <= 0) return
    this.counts.set(reason, (this.counts.get(reason) ?? 0) + n)
    this.changed = true
  }

  /** The counts in order when they changed since the last call, else null. */
  takeChanged(): Record<string, number> | null {
    if (!this.changed) return null
    this.changed = false
    return sortedCounts(this.counts)
  }
}
