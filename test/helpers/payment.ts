import type { NewPayment } from '../../src/store/payments'

/** A ledger row to accept, as the payment gate would record one, keyed by `key`; `over` sets any field. */
export const ledgerPayment = (key: string, over: Partial<NewPayment> = {}): NewPayment => ({
  key,
  payer: '0x70997970C51812dc3A010C7d01b50e0d17dc79C8',
  amount: '1000',
  network: 'base-sepolia',
  version: 1,
  payload: { nonce: key },
  requirements: { maxAmountRequired: '1000' },
  validBefore: 2_000_000_000n,
  resource: 'http://127.0.0.1:8081/v1/scrape',
  ...over,
})
