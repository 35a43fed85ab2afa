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
    self.postMessage({ kind: 'stopped' } satisfies CheckpointerMessage)
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
  const pass = () => {
    for (const checkpoint of checkpoints) {
      try {
        checkpoint.get()
      } catch {
        // Busy (another checkpoint is running) or the file is going away: next pass.
      }
    }
    timer = setTimeout(pass, message.everyMs)
  }
  timer = setTimeout(pass, message.everyMs)
}
