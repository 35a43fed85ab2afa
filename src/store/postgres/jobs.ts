// STUB (to be written).
import type { JobStore, RunStore, TriggerStore } from '../types'
import { notWritten, type Pg } from './pg'

export function pgJobStore(_sql: Pg): JobStore {
  return notWritten<JobStore>('JobStore')
}
export function pgRunStore(_sql: Pg): RunStore {
  return notWritten<RunStore>('RunStore')
}
export function pgTriggerStore(_sql: Pg): TriggerStore {
  return notWritten<TriggerStore>('TriggerStore')
}
