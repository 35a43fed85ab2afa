/**
 * The checkpoint thread (src/store/checkpointer.ts): copies committed WAL frames of each
 * database back into it, so that the thread that writes does not. It never writes rows and
 * holds no transaction between passes.
 */
import { Database } from 'bun:sqlite'
import type { CheckpointerMessage } from './checkpointer'

declare const self: Worker

let timer: Timer | undefined
let passes = 0
/** The longest wait between passes while nothing changes. */
const IDLE_MAX_MS = 1000
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
    self.postMessage({ kind: 'stopped', passes } satisfies CheckpointerMessage)
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
  // PRAGMA data_version on a connection changes when another connection commits. While no
  // database changed and every WAL frame is copied back, passes space out, doubling up to
  // IDLE_MAX_MS apart (an idle `serve`); a pass that finds a commit goes back to `everyMs`.
  const versions = dbs.map((db) => db.query('PRAGMA data_version'))
  const seen = versions.map(() => -1)
  let delay = message.everyMs
  const pass = () => {
    passes++
    let busy = false
    checkpoints.forEach((checkpoint, i) => {
      try {
        const version = (versions[i]!.get() as { data_version: number }).data_version
        if (version !== seen[i]) busy = true
        seen[i] = version
        const r = checkpoint.get() as { busy: number; log: number; checkpointed: number } | null
        if (r && (r.busy || r.checkpointed < r.log)) busy = true
      } catch {
        // Busy (another checkpoint is running) or the file is going away: next pass.
        busy = true
      }
    })
    delay = busy ? message.everyMs : Math.min(delay * 2, Math.max(IDLE_MAX_MS, message.everyMs))
    timer = setTimeout(pass, delay)
  }
  timer = setTimeout(pass, delay)
}
