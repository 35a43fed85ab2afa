// STUB (to be written).
import type { NewArtifact } from '../artifacts'
import type { ArtifactStore, PaymentStore } from '../types'
import { notWritten, type Pg } from './pg'

export function pgArtifactStore(_sql: Pg): ArtifactStore {
  return notWritten<ArtifactStore>('ArtifactStore')
}
/** Inserts a batch's artifact rows inside the caller's transaction. */
export async function insertArtifacts(_tx: Pg, _rows: NewArtifact[]): Promise<void> {
  throw new Error('not written yet')
}
export function pgPaymentStore(_sql: Pg): PaymentStore {
  return notWritten<PaymentStore>('PaymentStore')
}
