import type { CrawlStore } from '../store/crawl-store'

/**
 * How old the run's row may be when a process crawling a shared run acts on it: its moves reach
 * the process at once (moved(), from the store's notifications); this is the fallback for a
 * notification lost.
 */
const SHARED_STATUS_MS = 1_000

type Row = { status: string; paused_ms: number } | null

/**
 * The run's row as an execution acts on it: a stop or pause from the API, the paused time the
 * age limit leaves out. A process holding the run whole reads it at every turn of its loop, a
 * local read. One sharing the run with others reads it when told the run moved, or once
 * SHARED_STATUS_MS has passed: a round trip to the database per page spared.
 */
export class RunState {
  private last: { at: number; moves: number; row: Row } | null = null
  private moves = 0

  constructor(
    private readonly crawl: Pick<CrawlStore, 'status'>,
    private readonly runSeq: number,
    private readonly shared: boolean,
  ) {}

  async read(now: number): Promise<Row> {
    const last = this.last
    if (this.shared && last && last.moves === this.moves && now - last.at < SHARED_STATUS_MS) return last.row
    // A read begun before a move does not stand for after it: it keeps the count it began at.
    const moves = this.moves
    const row = await this.crawl.status(this.runSeq)
    this.last = { at: now, moves, row }
    return row
  }

  /** The run was paused, resumed, stopped or finished somewhere in the cluster. */
  moved() {
    this.moves++
  }
}
