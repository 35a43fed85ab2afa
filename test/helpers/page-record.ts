import { newPageRecord, type PageRecord } from '../../src/store/page-records'

/** A visited page as the engine records it: status 200, depth 0, no children, no entries it stands for, unless `over` says otherwise. */
export const pageRecord = (hash: string, hostHash: string, over: Partial<PageRecord> = {}): PageRecord => ({ ...newPageRecord(hash, hostHash, 0, null, 200), ...over })
