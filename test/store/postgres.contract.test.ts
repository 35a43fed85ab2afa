import { afterAll } from 'bun:test'
import type { SQL } from 'bun'
import { openPostgres } from '../../src/store/postgres/open'
import { postgresStore } from '../../src/store/postgres/store'
import { freshDatabase } from '../helpers/postgres'
import { storeContract } from './contract'
import { crawlStoreContract } from './crawl-contract'

const opened: SQL[] = []
afterAll(async () => {
  await Promise.all(opened.map((sql) => sql.close()))
})

const make = async () => {
  const sql = await openPostgres(freshDatabase())
  opened.push(sql)
  return postgresStore(sql, { journalDir: null })
}

storeContract('PostgreSQL', make)
crawlStoreContract('PostgreSQL', make)
