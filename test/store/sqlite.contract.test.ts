import { afterAll, expect, test } from 'bun:test'
import { Database } from 'bun:sqlite'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createStore } from '../../src/store'
import { openDatabase } from '../../src/store/db'
import { storeContract } from './contract'
import { crawlStoreContract } from './crawl-contract'
import { webhookContract } from './webhook-contract'

const opened: { dir: string; db: Database }[] = []
afterAll(() => {
  for (const { dir, db } of opened) {
    db.close()
    rmSync(dir, { recursive: true, force: true })
  }
})

/** A store on a new data dir, closed and removed after the file. */
function fresh() {
  const dir = mkdtempSync(join(tmpdir(), 'trawl-store-'))
  const db = openDatabase(dir)
  opened.push({ dir, db })
  return { dir, store: createStore(db) }
}
const make = async () => fresh().store

storeContract('SQLite', make)
crawlStoreContract('SQLite', make)
webhookContract('SQLite', make)

test("with nothing due, the deliverer's claim does not take the write lock: it answers at once while another connection holds it", async () => {
  const { dir, store } = fresh()
  // A crawl's commit in progress, as another connection of the file (the busy timeout is 5 s).
  const writer = new Database(join(dir, 'trawl.db'))
  try {
    writer.exec('BEGIN IMMEDIATE')
    const started = performance.now()
    expect(await store.webhooks.claim('idle', Date.now(), 60_000, 100)).toEqual([])
    // Waiting for the lock would take the busy timeout, then fail.
    expect(performance.now() - started).toBeLessThan(2_500)
    writer.exec('ROLLBACK')
  } finally {
    writer.close()
  }
})
