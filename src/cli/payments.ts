import { ConfigError, loadConfig } from '../config'
import { atomicToUsd } from '../payment/money'
import { openExistingStore } from '../store/open'
import { PAYMENT_STATUSES, type Payment, type PaymentStatus } from '../store/payments'

/**
 * `trawl payments [--status S] [--json] [--data-dir D]`: the payment ledger, newest first. The
 * table is for reading; `--json` prints one JSON object per line with the signed authorization,
 * which is what an operator needs to settle a payment later (docs/payments.md).
 */
export async function paymentsCommand(argv: string[], out: NodeJS.WritableStream = process.stdout): Promise<number> {
  const { config, positionals, flags } = loadConfig(argv, process.env, { status: { type: 'string' }, json: { type: 'boolean' } })
  if (positionals.length > 0) throw new ConfigError(`payments takes no arguments, got "${positionals[0]}"`)
  const status = flags.status as string | undefined
  if (status !== undefined && !PAYMENT_STATUSES.includes(status as PaymentStatus)) {
    throw new ConfigError(`--status: must be one of ${PAYMENT_STATUSES.join(', ')}, got "${status}"`)
  }
  // Listing must not create a data dir where there was none (a mistyped --data-dir).
  const opened = await openExistingStore(config)
  if (!opened) {
    if (!flags.json) out.write(`no payments: ${config.dataDir} has no trawl.db\n`)
    return 0
  }
  try {
    const rows = opened.store.payments.list(status as PaymentStatus | undefined)
    if (flags.json) for await (const p of rows) out.write(`${JSON.stringify(jsonLine(p))}\n`)
    else await writeTable(rows, out)
  } finally {
    await opened.close()
  }
  return 0
}

/** A ledger row for machines: everything, with the authorization and signature lifted out of the payload. */
function jsonLine(p: Payment) {
  const body = (p.payload.payload ?? {}) as { authorization?: unknown; signature?: unknown }
  return {
    created_at: p.created_at,
    updated_at: p.updated_at,
    status: p.status,
    payer: p.payer,
    amount: p.amount,
    amount_usd: usd(p.amount),
    network: p.network,
    x402_version: p.version,
    resource: p.resource,
    valid_before: p.valid_before,
    settle_tx: p.settle_tx,
    settle_error: p.settle_error,
    key: p.key,
    authorization: body.authorization ?? null,
    signature: body.signature ?? null,
    payload: p.payload,
    requirements: p.requirements,
  }
}

async function writeTable(rows: AsyncIterable<Payment>, out: NodeJS.WritableStream) {
  const head = ['TIME', 'STATUS', 'PAYER', 'AMOUNT', 'NETWORK', 'RESOURCE']
  const widths = [24, 14, 42, 18, 12]
  const line = (cells: string[]) =>
    cells
      .map((c, i) => (i < cells.length - 1 ? c.padEnd(widths[i]!) : c))
      .join(' ')
      .trimEnd() + '\n'
  const totals = new Map<string, { count: number; atomic: bigint }>()
  let count = 0
  out.write(line(head))
  for await (const p of rows) {
    count++
    const t = totals.get(p.status) ?? { count: 0, atomic: 0n }
    const dollars = usd(p.amount)
    totals.set(p.status, { count: t.count + 1, atomic: t.atomic + (dollars === null ? 0n : BigInt(p.amount)) })
    out.write(line([p.created_at ?? '-', p.status, p.payer, dollars === null ? `? (${p.amount})` : `${dollars} (${p.amount})`, p.network, p.resource]))
  }
  const summary = PAYMENT_STATUSES.filter((s) => totals.has(s)).map((s) => `${s} ${totals.get(s)!.count} (${atomicToUsd(totals.get(s)!.atomic.toString())})`)
  out.write(count === 0 ? 'no payments\n' : `${count} payment${count === 1 ? '' : 's'}: ${summary.join(', ')}\n`)
}

/** A row's amount in USD; null for a stored amount that is not atomic units, which is listed as it is rather than stop the listing. */
const usd = (atomic: string): string | null => (typeof atomic === 'string' && /^\d{1,100}$/.test(atomic) ? atomicToUsd(atomic) : null)
