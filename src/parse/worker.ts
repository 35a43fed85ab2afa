/**
 * A parse worker thread: runs parseDocument on what the pool sends. Its lookups (category,
 * data maps) were resolved by the main thread, which owns the database.
 */
import { parseDocument, ParseFailure } from './pipeline'
import { contextOf, type WorkerReply, type WorkerTask } from './pool'

declare const self: Worker

self.onmessage = async (event: MessageEvent<WorkerTask>) => {
  const { id, input, context } = event.data
  let reply: WorkerReply
  try {
    reply = { id, ok: true, result: await parseDocument(input, contextOf(context)) }
  } catch (err) {
    reply = { id, ok: false, code: err instanceof ParseFailure ? err.code : null, message: err instanceof Error ? err.message : String(err) }
  }
  self.postMessage(reply)
}
