import { ValidationError } from './errors'

/**
 * Keyset cursors. A page is "rows whose sort key is below this one", so the position never
 * shifts when rows are inserted ahead of it, and page 50 costs what page 1 does. The cursor
 * carries the row's sequence number; the prefix versions the format.
 */
const PREFIX = 'k1.'

export function encodeCursor(seq: number): string {
  // btoa over Buffer: a cursor is made for every page served and this is the cheaper call.
  return btoa(`${PREFIX}${seq}`).replace(/=+$/, '').replace(/\+/g, '-').replace(/\//g, '_')
}

/** The sequence number in a cursor; a malformed cursor is a 422 on `page`. */
export function decodeCursor(cursor: string): number {
  const text = Buffer.from(cursor, 'base64url').toString('utf8')
  const seq = text.startsWith(PREFIX) ? Number(text.slice(PREFIX.length)) : NaN
  if (!/^[A-Za-z0-9_-]+$/.test(cursor) || !Number.isSafeInteger(seq) || seq < 1) {
    throw ValidationError.of('page', 'is not a cursor this service issued')
  }
  return seq
}
