/**
 * The crawl writer thread (src/store/crawl-writer.ts): commits the crawl engine's batches through
 * a connection of its own, one at a time, in the order they were posted.
 */
import { Database } from 'bun:sqlite'
import { createStore, type Store } from '.'
import { connectBlobDb } from '../blob/blob-db'
import { commitCrawlBatch, type BlobRowWriter } from './crawl-batch'
import { received, type WriterRequest, type WriterReply } from './crawl-writer'
import { applyWalPragmas } from './wal'

declare const self: Worker

let store: Store | null = null
let blobDb: Database | null = null
let writeBlobs: BlobRowWriter | null = null
/** acks[0]: the last id of the unbroken run of successful commits from the first (see ThreadedCrawlWriter). */
let acks: Int32Array | null = null
let unbroken = true
const reply = (message: WriterReply) => self.postMessage(message)
const GC_EVERY = 4

function closeAll() {
  store?.db.close()
  blobDb?.close()
  store = blobDb = writeBlobs = null
}

self.onmessage = (event: MessageEvent<WriterRequest>) => {
  const message = event.data
  switch (message.kind) {
    case 'open':
      try {
        acks = new Int32Array(message.acks)
        // The main thread created and migrated the files; a missing one is an error, never a new file.
        const db = new Database(message.path, { readwrite: true, create: false, strict: true })
        applyWalPragmas(db, { synchronous: 'normal', cacheKiB: 1024 })
        db.exec('PRAGMA foreign_keys = ON')
        store = createStore(db)
        if (message.blobs) ({ db: blobDb, write: writeBlobs } = connectBlobDb(message.blobs.path, message.blobs.synchronous))
        reply({ kind: 'ready' })
      } catch (err) {
        closeAll()
        reply({ kind: 'failed', message: err instanceof Error ? err.message : String(err) })
      }
      return
    case 'commit': {
      let result: WriterReply
      try {
        result = { kind: 'committed', id: message.id, result: commitCrawlBatch(store!, received(message.batch), writeBlobs) }
      } catch (err) {
        result = { kind: 'error', id: message.id, message: err instanceof Error ? err.message : String(err) }
      }
      // Only an unbroken run of successes is counted: a lost or failed commit is told by its message alone.
      unbroken &&= result.kind === 'committed' && result.result === 'ok'
      if (unbroken) Atomics.store(acks!, 0, message.id)
      reply(result)
      // Each batch leaves its JSON, its rows and its bodies' buffers behind, and JavaScriptCore lets
      // a heap grow well past what is live before it collects: this thread's live heap is small,
      // so a full collection every few batches is cheap and keeps the crawl's memory flat.
      if (message.id % GC_EVERY === 0) Bun.gc(true)
      return
    }
    case 'close':
      closeAll()
      reply({ kind: 'closed' })
  }
}
