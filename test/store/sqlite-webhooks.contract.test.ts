import { afterAll } from 'bun:test'
import type { Database } from 'bun:sqlite'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createStore } from '../../src/store'
import { openDatabase } from '../../src/store/db'
import { webhookContract } from './webhook-contract'

const opened: { dir: string; db: Database }[] = []
afterAll(() => {
  for (const { dir, db } of opened) {
    db.close()
    rmSync(dir, { recursive: true, force: true })
  }
})

webhookContract('SQLite', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'trawl-webhook-store-'))
  const db = openDatabase(dir)
  opened.push({ dir, db })
  return createStore(db)
})
