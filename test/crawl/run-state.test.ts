/**
 * RunState: how often an execution reads its run's row. Holding a run whole, it reads it at every
 * turn of its loop; sharing the run with other processes, it reads it once a second unless told
 * the run moved, and a read that began before a move does not stand for after it. The reads are
 * counted on a real store, through a wrapper of its crawl store's `status`.
 */
import { afterAll, expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { RunState } from '../../src/crawl/run-state'
import { openDatabase } from '../../src/store/db'
import { createStore } from '../../src/store/index'

const dir = mkdtempSync(join(tmpdir(), 'trawl-run-state-'))
const db = openDatabase(dir)
const store = createStore(db)
afterAll(() => {
  db.close()
  rmSync(dir, { recursive: true, force: true })
})

function counted() {
  const counter = { reads: 0, status: (seq: number) => (counter.reads++, store.crawl.status(seq)) }
  return counter
}

test('a run held whole is read at every turn', async () => {
  const c = counted()
  const state = new RunState(c, 1, false)
  for (const at of [0, 1, 2]) expect(await state.read(at)).toBeNull() // no such run: the row is gone
  expect(c.reads).toBe(3)
})

test('a shared run is read once a second, and again at once when it moved', async () => {
  const c = counted()
  const state = new RunState(c, 1, true)
  await state.read(10_000)
  await state.read(10_500)
  await state.read(10_999)
  expect(c.reads).toBe(1)
  await state.read(11_000)
  expect(c.reads).toBe(2)
  state.moved()
  await state.read(11_001)
  expect(c.reads).toBe(3)
  await state.read(11_002)
  expect(c.reads).toBe(3)
})

test('a read begun before a move is not taken for one after it', async () => {
  const c = counted()
  const state = new RunState(c, 1, true)
  const reading = state.read(20_000)
  state.moved()
  await reading
  await state.read(20_001)
  expect(c.reads).toBe(2)
  await state.read(20_002)
  expect(c.reads).toBe(2)
})
