import { decodeCursor, encodeCursor } from '../http/cursor'
import type { Page } from '../store/types'

/**
 * The key a `page` cursor carries, for the store's `after`. Decoded before any lookup, so a
 * malformed cursor is a 422 on `page` before a 404 (design.md §3, order of checks).
 */
export const afterOf = (page: string | undefined): number | undefined => (page === undefined ? undefined : decodeCursor(page))

/** A store's page as a list endpoint answers it (design.md §3): the rows, and the cursor of the next page. */
export const pageBody = <T>(page: Page<T>): { data: T[]; next_page: string | null } => ({ data: page.data, next_page: page.next === null ? null : encodeCursor(page.next) })
