// Migrates the database at argv[2] to this checkout's PostgreSQL schema (the test cluster's template).
import { openPostgres } from '../../src/store/postgres/open'

const sql = await openPostgres(process.argv[2]!)
await sql.close()
