import m001 from './001-catalogue.sql' with { type: 'text' }
import m002 from './002-patterns-data-maps.sql' with { type: 'text' }
import m003 from './003-crawl.sql' with { type: 'text' }
import m004 from './004-artifacts.sql' with { type: 'text' }
import m005 from './005-crawl-logs.sql' with { type: 'text' }
import m006 from './006-edge-ranges.sql' with { type: 'text' }
import m007 from './007-frontier-by-seq.sql' with { type: 'text' }
import m008 from './008-artifact-checksum.sql' with { type: 'text' }
import m009 from './009-triggers.sql' with { type: 'text' }
import m010 from './010-payments.sql' with { type: 'text' }
import m011 from './011-body-deletions.sql' with { type: 'text' }
import m012 from './012-run-outcomes.sql' with { type: 'text' }
import m013 from './013-page-records.sql' with { type: 'text' }
import m014 from './014-derived-parsed.sql' with { type: 'text' }
import m015 from './015-link-seq-keys.sql' with { type: 'text' }
import m016 from './016-trigger-outcomes.sql' with { type: 'text' }
import m017 from './017-webhooks.sql' with { type: 'text' }

/** Migrations in order; embedded in the binary as text. Append, never edit a shipped one. */
export const migrations: readonly string[] = [m001, m002, m003, m004, m005, m006, m007, m008, m009, m010, m011, m012, m013, m014, m015, m016, m017]
