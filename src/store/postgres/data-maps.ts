// STUB (to be written).
import type { DataMapStore } from '../types'
import { notWritten, type Pg } from './pg'

export function pgDataMapStore(_sql: Pg): DataMapStore {
  return notWritten<DataMapStore>('DataMapStore')
}
