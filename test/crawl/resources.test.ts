// The store and blob store of openCrawlResources count their failures (trawl_store_errors_total,
// trawl_blob_errors_total) for every caller; a domain error is an answer, not counted.
import { afterAll, expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { loadConfig } from '../../src/config'
import { openCrawlResources } from '../../src/crawl/resources'
import { createLogger } from '../../src/log'
import { blobErrors, storeErrors } from '../../src/metrics'

const dir = mkdtempSync(join(tmpdir(), 'trawl-resources-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

test('failed store and blob calls are counted by operation; not-found and conflict answers are not', async () => {
  const { config } = loadConfig(['--data-dir', dir], {})
  const r = await openCrawlResources(config, createLogger('error'))
  const count = () => ({ get: storeErrors.labels('runs.get').value, create: storeErrors.labels('jobs.create').value, blobGet: blobErrors.labels('get').value })
  const before = count()
  const job = { id: crypto.randomUUID(), name: 'j', config: {}, labels: {} }
  await r.store.jobs.create('acme', job)
  await expect(r.store.jobs.create('acme', job)).rejects.toThrow('already exists')
  expect(await r.store.runs.get('acme', crypto.randomUUID())).toBeNull()
  await expect(r.blobs.get('not a key')).rejects.toThrow('blob key may only contain')
  expect(count()).toEqual({ get: before.get, create: before.create, blobGet: before.blobGet + 1 })
  await r.close()
  // The database closed under it: every call fails, and is counted.
  await expect(r.store.runs.get('acme', crypto.randomUUID())).rejects.toThrow()
  expect(count()).toEqual({ get: before.get + 1, create: before.create, blobGet: before.blobGet + 1 })
})
