// STUB: hosts and links of the catalogue on PostgreSQL (to be written).
import type { HostStore, LinkStore } from '../types'
import { notWritten, type Pg } from './pg'

export function pgHostStore(_sql: Pg): HostStore {
  return notWritten<HostStore>('HostStore')
}
export function pgLinkStore(_sql: Pg): LinkStore {
  return notWritten<LinkStore>('LinkStore')
}
/** Inserts the catalogue rows (hosts and links) of these normalized URLs that are new; inside the caller's transaction. */
export async function ensureLinks(_tx: Pg, _tenant: string, _urls: string[]): Promise<void> {
  throw new Error('not written yet')
}
