// Group commit: what is submitted together is applied together, each caller settles only after
// the apply that carried its operation, and a failing apply rejects exactly its own batch.
import { describe, expect, test } from 'bun:test'
import { CommitBatcher } from '../../src/util/commit-batcher'

function recorder(opts = { maxBatch: 64, maxWaitMs: 50 }) {
  const applied: number[][] = []
  let failNext = false
  const batcher = new CommitBatcher<number, string>((ops) => {
    applied.push([...ops])
    if (failNext) {
      failNext = false
      throw new Error('apply failed')
    }
    return ops.map((op) => `done ${op}`)
  }, opts)
  return { batcher, applied, failOnce: () => (failNext = true) }
}

describe('CommitBatcher', () => {
  test('operations submitted in one turn share one apply, in order, each with its own result', async () => {
    const { batcher, applied } = recorder()
    const results = await Promise.all([1, 2, 3, 4].map((op) => batcher.submit(op)))
    expect(results).toEqual(['done 1', 'done 2', 'done 3', 'done 4'])
    expect(applied).toEqual([[1, 2, 3, 4]])
    expect(batcher.counts).toEqual({ commits: 1, ops: 4 })
  })

  test('nothing is applied until the caller has yielded; a lone operation waits one turn, not a timer', async () => {
    const { batcher, applied } = recorder({ maxBatch: 64, maxWaitMs: 10_000 })
    const pending = batcher.submit(7)
    expect(applied).toEqual([])
    const started = performance.now()
    expect(await pending).toBe('done 7')
    expect(performance.now() - started).toBeLessThan(1000)
    expect(applied).toEqual([[7]])
  })

  test('maxBatch splits a burst into applies of at most that many', async () => {
    const { batcher, applied } = recorder({ maxBatch: 3, maxWaitMs: 50 })
    await Promise.all([1, 2, 3, 4, 5, 6, 7].map((op) => batcher.submit(op)))
    expect(applied).toEqual([[1, 2, 3], [4, 5, 6], [7]])
  })

  test('a failing apply rejects the callers of its batch only', async () => {
    const { batcher, applied, failOnce } = recorder({ maxBatch: 2, maxWaitMs: 50 })
    failOnce()
    const results = await Promise.allSettled([1, 2, 3].map((op) => batcher.submit(op)))
    expect(applied).toEqual([[1, 2], [3]])
    expect(results.map((r) => (r.status === 'fulfilled' ? r.value : (r.reason as Error).message))).toEqual(['apply failed', 'apply failed', 'done 3'])
    expect(batcher.counts).toEqual({ commits: 1, ops: 1 })
  })

  test('isolate: a failed batch is applied again one operation at a time; only the failing one is rejected', async () => {
    const applied: number[][] = []
    const batcher = new CommitBatcher<number, string>(
      (ops) => {
        applied.push([...ops])
        if (ops.includes(2)) throw new Error(`refused ${ops.join(',')}`)
        return ops.map((op) => `done ${op}`)
      },
      { maxBatch: 64, maxWaitMs: 50, isolate: true },
    )
    const results = await Promise.allSettled([1, 2, 3].map((op) => batcher.submit(op)))
    expect(applied).toEqual([[1, 2, 3], [1], [2], [3]])
    expect(results.map((r) => (r.status === 'fulfilled' ? r.value : (r.reason as Error).message))).toEqual(['done 1', 'refused 2', 'done 3'])
    expect(batcher.counts).toEqual({ commits: 2, ops: 2 })
  })

  test('operations submitted while a batch is being applied go into the next one', async () => {
    const { batcher, applied } = recorder()
    const first = batcher.submit(1)
    await first
    await Promise.all([batcher.submit(2), batcher.submit(3)])
    expect(applied).toEqual([[1], [2, 3]])
  })
})
