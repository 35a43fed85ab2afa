/**
 * The checkpoint thread (src/store/checkpointer.ts): copies committed WAL frames of each
 * database back into it, so that the thread that writes does not. It never writes rows and
 * holds no transaction between passes.
 */
import { Database } from 'bun:sqlite'
import type { CheckpointerMessage } from './checkpointer'

declare const self: Worker

let timer: Timer | undefined
let dbs: Database[] = []

const closeAll = () => {
  for (const db of dbs) db.close()
  dbs = []
}

self.onmessage = (event: MessageEvent<CheckpointerMessage>) => {
  const message = event.data
  if (message.kind === 'stop') {
    clearTimeout(timer)
    closeAll()
    self.postMessage({ kind: 'stopped', passes: stats() } satisfies CheckpointerMessage)
    return
  }
  if (message.kind !== 'start') return
  try {
    // The writers created and migrated these files; a missing one is an error, never a new file.
    for (const path of message.paths) dbs.push(new Database(path, { readwrite: true, create: false, strict: true }))
  } catch (err) {
    closeAll()
    self.postMessage({ kind: 'failed', message: err instanceof Error ? err.message : String(err) } satisfies CheckpointerMessage)
    return
  }
  const checkpoints = dbs.map((db) => db.query('PRAGMA wal_checkpoint(PASSIVE)'))
  // Each database's WAL length and frames copied at the last pass: unchanged means no commit
  // since. An idle process (serve with nothing to crawl) then wakes less and less often, up to
  // IDLE_MAX_MS apart; the first pass that finds new frames goes back to `everyMs`.
  const seen = checkpoints.map(() => '')
  let delay = message.everyMs
  let passes = 0
  const pass = () => {
    passes++
    let moved = false
    checkpoints.forEach((checkpoint, i) => {
      try {
        const r = checkpoint.get() as { log: number; checkpointed: number } | null
        const now = r ? `${r.log}/${r.checkpointed}` : ''
        if (now !== seen[i]) moved = true
        seen[i] = now
      } catch {
        // Busy (another checkpoint is running) or the file is going away: next pass.
        moved = true
      }
    })
    delay = moved ? message.everyMs : Math.min(delay * 2, Math.max(IDLE_MAX_MS, message.everyMs))
    timer = setTimeout(pass, delay)
  }
  stats = () => passes
  timer = setTimeout(pass, delay)
}

const IDLE_MAX_MS = 5000
let stats = () => 0
