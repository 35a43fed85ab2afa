/**
 * A parse worker thread: runs parseDocument and pattern matches on what the pool sends. Its
 * lookups (pattern sets, data maps) were made by the main thread, which owns the database.
 */
import { matchPaths } from '../extract/patterns'
import { parseDocument, ParseFailure } from './pipeline'
import { contextOf, type WorkerReady, type WorkerReply, type WorkerTask } from './pool'

declare const self: Worker

self.onmessage = async (event: MessageEvent<WorkerTask>) => {
  const task = event.data
  const id = task.id
  let reply: WorkerReply
  try {
    const result = task.kind === 'parse' ? await parseDocument(task.input, contextOf(task.context)) : matchPaths(task.task.set, task.task.paths)
    reply = { id, ok: true, result }
  } catch (err) {
    reply = { id, ok: false, code: err instanceof ParseFailure ? err.code : null, message: err instanceof Error ? err.message : String(err) }
  }
  self.postMessage(reply)
}

// Loaded: the pool starts the clock of a task sent meanwhile from here, not from the spawn.
self.postMessage({ ready: true } satisfies WorkerReady)
