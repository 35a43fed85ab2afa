// STUB (to be written).
import type { PatternStore } from '../types'
import { notWritten, type Pg } from './pg'

export function pgPatternStore(_sql: Pg): PatternStore {
  return notWritten<PatternStore>('PatternStore')
}
