import { afterAll, beforeEach } from 'bun:test'
import type { SQL } from 'bun'
import { openPostgres } from '../../src/store/postgres/open'
import { postgresStore } from '../../src/store/postgres/store'
import { freshDatabase } from '../helpers/postgres'
import { storeContract } from './contract'
import { crawlStoreContract } from './crawl-contract'
import { webhookContract } from './webhook-contract'

const opened: SQL[] = []
// Each test opens its own pool; a finished test's pools are closed before the next opens one, so
// the file holds one test's connections at a time, not the whole file's (the cluster allows 400).
const closeOpened = async () => {
  await Promise.all(opened.splice(0).map((sql) => sql.close()))
}
beforeEach(closeOpened)
afterAll(closeOpened)

const make = async () => {
  const sql = await openPostgres(freshDatabase())
  opened.push(sql)
  return postgresStore(sql, { journalDir: null })
}

storeContract('PostgreSQL', make)
crawlStoreContract('PostgreSQL', make)
webhookContract('PostgreSQL', make)
