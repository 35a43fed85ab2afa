/**
 * Run by disk.test.ts and killed with SIGKILL mid-flight: keeps 32 puts in flight against
 * the data dir in argv[2] and prints `acked N` only after put N's promise resolved.
 * Every 8th body is large (a file); the rest are inline rows.
 */
import { DiskBlobStore } from '../../src/blob/disk'
import { crashBody } from './bodies'

const store = new DiskBlobStore(process.argv[2]!)
const start = Number(process.argv[3] ?? 0)
let next = start

async function worker() {
  for (;;) {
    const n = next++
    await store.put(`t/crash/${n}`, crashBody(n), 'application/octet-stream')
    process.stdout.write(`acked ${n}\n`)
  }
}
for (let i = 0; i < 32; i++) void worker()
