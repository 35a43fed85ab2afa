import m001 from './001-schema.sql' with { type: 'text' }
import m002 from './002-cluster.sql' with { type: 'text' }
import m003 from './003-frontier-plans.sql' with { type: 'text' }
import m004 from './004-trigger-outcomes.sql' with { type: 'text' }
import m005 from './005-webhooks.sql' with { type: 'text' }

/** The PostgreSQL engine's migrations in order; embedded in the binary as text. Append, never edit a shipped one. */
export const migrations: readonly string[] = [m001, m002, m003, m004, m005]
