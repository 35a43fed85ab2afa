import type { IndexRow, S3IndexOpener } from '../../blob/s3-index'
import { first, type Pg } from './pg'

/**
 * The S3 blob store's index as the table s3_objects of the PostgreSQL store: every process that
 * shares the database reads the bodies any of them put, which a file of one data dir could not
 * give. Each write is one statement, atomic on its own; the store runs the puts and deletes of
 * one key one at a time, and a key belongs to the one execution that holds its run. The pool is
 * the store's, so closing the index leaves it open.
 */
export function pgS3Index(sql: Pg): S3IndexOpener {
  return () => ({
    async get(name) {
      return first<IndexRow>(await sql`SELECT size, checksum, content_type FROM s3_objects WHERE name = ${name}`)
    },
    async upsert(name, row) {
      await sql`INSERT INTO s3_objects (name, size, checksum, content_type) VALUES (${name}, ${row.size}, ${row.checksum}, ${row.content_type})
        ON CONFLICT (name) DO UPDATE SET size = excluded.size, checksum = excluded.checksum, content_type = excluded.content_type`
    },
    async delete(name) {
      const gone = await sql`DELETE FROM s3_objects WHERE name = ${name} RETURNING 1 AS one`
      return gone.length > 0
    },
    flush() {},
    async close() {},
  })
}
