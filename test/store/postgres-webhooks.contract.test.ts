import { afterAll, beforeEach } from 'bun:test'
import type { SQL } from 'bun'
import { openPostgres } from '../../src/store/postgres/open'
import { postgresStore } from '../../src/store/postgres/store'
import { freshDatabase } from '../helpers/postgres'
import { webhookContract } from './webhook-contract'

const opened: SQL[] = []
// A finished test's pool is closed before the next test opens one, as in postgres.contract.test.ts.
const closeOpened = async () => {
  await Promise.all(opened.splice(0).map((sql) => sql.close()))
}
beforeEach(closeOpened)
afterAll(closeOpened)

webhookContract('PostgreSQL', async () => {
  const sql = await openPostgres(freshDatabase())
  opened.push(sql)
  return postgresStore(sql, { journalDir: null })
})
