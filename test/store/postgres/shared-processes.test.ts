// The shared crawl contract's tests of two processes (test/store/shared-crawl-contract.ts) on
// PostgreSQL: each "process" is a store over a pool of its own on one database.
import { afterAll } from 'bun:test'
import type { SQL } from 'bun'
import { openPostgres } from '../../../src/store/postgres/open'
import { postgresStore } from '../../../src/store/postgres/store'
import type { Store } from '../../../src/store/types'
import { freshDatabase } from '../../helpers/postgres'
import { sharedProcessesContract } from '../shared-processes-contract'

const opened: SQL[] = []
afterAll(async () => {
  await Promise.all(opened.map((sql) => sql.close()))
})

const databases = new Map<Store, string>()
const open = async (url: string) => {
  const sql = await openPostgres(url)
  opened.push(sql)
  const store = postgresStore(sql, { journalDir: null })
  databases.set(store, url)
  return store
}

sharedProcessesContract(
  'PostgreSQL',
  () => open(freshDatabase()),
  (store) => open(databases.get(store)!),
)
