/**
 * Small-put throughput of DiskBlobStore, batched and not: `bun test/blob/bench.ts`.
 * Not a test; numbers for docs and for judging changes to the batcher.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { DiskBlobStore, type DiskBlobStoreOptions } from '../../src/blob/disk'
import { bodyOf, readAll, streamOf } from '../../test/blob/bodies'

const BODY = 3000 // a typical crawled page, the size of the crawl measurements in design.md's appendix

async function run(label: string, opts: DiskBlobStoreOptions, n: number, mode: 'serial' | 'workers' | 'all') {
  const dir = mkdtempSync(join(tmpdir(), 'trawl-blob-bench-'))
  const store = new DiskBlobStore(dir, opts)
  const bodies = Array.from({ length: 64 }, (_, i) => bodyOf(i, BODY))
  const cpu0 = process.cpuUsage()
  const t0 = performance.now()
  if (mode === 'serial') for (let i = 0; i < n; i++) await store.put(`t/b/${i}`, bodies[i % 64]!, 'text/html')
  else if (mode === 'all') await Promise.all(Array.from({ length: n }, (_, i) => store.put(`t/b/${i}`, bodies[i % 64]!, 'text/html')))
  else {
    let next = 0
    await Promise.all(
      Array.from({ length: 64 }, async () => {
        for (let i = next++; i < n; i = next++) await store.put(`t/b/${i}`, bodies[i % 64]!, 'text/html')
      }),
    )
  }
  const ms = performance.now() - t0
  const cpu = process.cpuUsage(cpu0)
  const { commits } = store.stats
  await store.close()
  rmSync(dir, { recursive: true, force: true })
  const cpuUs = (cpu.user + cpu.system) / n
  console.log(`${label.padEnd(52)} ${String(Math.round((n / ms) * 1000)).padStart(7)} puts/s  ${cpuUs.toFixed(1).padStart(6)} µs CPU/put  ${(n / commits).toFixed(1).padStart(5)} puts/commit`)
}

await run('serial (await each), batched store', {}, 3000, 'serial')
await run('64 concurrent workers, batched store', {}, 20000, 'workers')
await run('20k at once (Promise.all), batched store', {}, 20000, 'all')
await run('64 concurrent workers, a commit per put (batchMax 1)', { batchMax: 1 }, 20000, 'workers')
await run('64 workers, batched, synchronous=FULL', { synchronous: 'full' }, 20000, 'workers')
await run('64 workers, commit per put, synchronous=FULL', { synchronous: 'full', batchMax: 1 }, 2000, 'workers')
await run('64 workers, every body a file (inlineMax 0)', { inlineMax: 0 }, 2000, 'workers')

{
  const dir = mkdtempSync(join(tmpdir(), 'trawl-blob-bench-'))
  const store = new DiskBlobStore(dir)
  const body = bodyOf(1, 5_000_000)
  let t0 = performance.now()
  await store.put('t/big', streamOf(body), 'application/octet-stream')
  const putMs = performance.now() - t0
  t0 = performance.now()
  await readAll((await store.get('t/big'))!.stream)
  const getMs = performance.now() - t0
  await Promise.all(Array.from({ length: 5000 }, (_, i) => store.put(`t/g/${i}`, bodyOf(i, BODY), 'text/html')))
  t0 = performance.now()
  for (let i = 0; i < 5000; i++) await readAll((await store.get(`t/g/${i}`))!.stream)
  const getsPerSec = Math.round(5000 / ((performance.now() - t0) / 1000))
  console.log(`5 MB streamed put ${putMs.toFixed(0)} ms, get ${getMs.toFixed(0)} ms; inline 3 KB gets ${getsPerSec}/s`)
  await store.close()
  rmSync(dir, { recursive: true, force: true })
}
