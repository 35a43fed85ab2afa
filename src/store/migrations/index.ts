import m001 from './001-catalogue.sql' with { type: 'text' }
import m002 from './002-patterns-data-maps.sql' with { type: 'text' }

/** Migrations in order; embedded in the binary as text. Append, never edit a shipped one. */
export const migrations: readonly string[] = [m001, m002]
