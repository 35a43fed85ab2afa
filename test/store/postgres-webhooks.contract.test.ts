// In a file of its own: the main contract file already holds a pool per test open to its end.
import { afterAll } from 'bun:test'
import type { SQL } from 'bun'
import { openPostgres } from '../../src/store/postgres/open'
import { postgresStore } from '../../src/store/postgres/store'
import { freshDatabase } from '../helpers/postgres'
import { webhookContract } from './webhook-contract'

const opened: SQL[] = []
afterAll(async () => {
  await Promise.all(opened.map((sql) => sql.close()))
})

webhookContract('PostgreSQL', async () => {
  const sql = await openPostgres(freshDatabase())
  opened.push(sql)
  return postgresStore(sql, { journalDir: null })
})
