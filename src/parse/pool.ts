import type { DataMapDef } from '../extract/data-map'
import type { PathMatch, PatternSetDef } from '../extract/patterns'
import { baseUrlOf, ParseFailure, type ParseContext, type ParseInput, type ParseResult } from './pipeline'

/**
 * Parsing and pattern matching run on worker threads. Both are CPU work on user input: a 2 MB
 * page takes most of a second to turn into markdown, and a pattern set at its size budget can
 * take seconds to test a long URL (re2js is linear in the URL, but per RE2 instruction). On the
 * main thread that would stall every other request; workers keep the API answering, spread a
 * batch over the cores, and put a time limit on any one task.
 */

/** What a worker needs instead of the database: the lookups, already made. */
export type ContextSnapshot = { sets: readonly PatternSetDef[]; maps: Record<string, DataMapDef> }
export type MatchTask = { set: PatternSetDef & { host: { domain: string } }; paths: readonly string[] }
export type WorkerTask = { id: number } & ({ kind: 'parse'; input: ParseInput; context: ContextSnapshot } | { kind: 'match'; task: MatchTask })
export type WorkerReply = { id: number; ok: true; result: unknown } | { id: number; ok: false; code: ParseFailure['code'] | null; message: string }

/** Resolves, on the main thread, every lookup the pipelines of `input` can make. */
export function snapshotContext(input: ParseInput, ctx: ParseContext): ContextSnapshot {
  const wantsCategory = input.pipelines.some((p) => p.guards?.some((g) => g.kind === 'category'))
  const maps: Record<string, DataMapDef> = {}
  for (const p of input.pipelines) {
    for (const step of p.steps ?? []) {
      if (step.kind !== 'data_map' || step.id in maps) continue
      const map = ctx.dataMap(step.id)
      if (map) maps[step.id] = map
    }
  }
  return { sets: wantsCategory ? ctx.patternSets(baseUrlOf(input.url, input.redirects)) : [], maps }
}

/** The ParseContext a worker answers from a snapshot. */
export const contextOf = (snapshot: ContextSnapshot): ParseContext => ({
  patternSets: () => snapshot.sets,
  dataMap: (id) => (Object.hasOwn(snapshot.maps, id) ? snapshot.maps[id]! : null),
})

// From source, worker.ts sits beside this file. In the compiled binary this file is bundled into
// the main entry at the root of the embedded tree (src/), and scripts/build.ts embeds worker.ts
// as a second entry at parse/worker.ts under that root. test/e2e parses through the binary.
const EMBEDDED = /\/\$bunfs\/|~BUN/ // the binary's embedded root: /$bunfs/ on unix, B:/~BUN/ on windows
const WORKER_URL = new URL(EMBEDDED.test(import.meta.url) ? './parse/worker.ts' : './worker.ts', import.meta.url).href

/** A task that ran out of time; the worker doing it is replaced. */
export class ParseTimeout extends Error {}

type Pending = { resolve: (r: unknown) => void; reject: (e: Error) => void; timer: Timer; worker: Slot }
type Slot = { worker: Worker; busy: number }

/** A fixed set of parse workers; each task goes to the least busy one. */
export class ParsePool {
  private readonly slots: Slot[] = []
  private readonly pending = new Map<number, Pending>()
  private nextId = 1

  constructor(
    private readonly size: number,
    /** A document taking longer than this is abandoned and its worker restarted. */
    private readonly timeoutMs: number,
  ) {}

  /** Parses `input` on a worker; the context lookups are made here first. */
  parse(input: ParseInput, ctx: ParseContext): Promise<ParseResult> {
    return this.run({ kind: 'parse', input, context: snapshotContext(input, ctx) }, 'parsing') as Promise<ParseResult>
  }

  /** Tests paths against a pattern set on a worker (POST /v1/patterns/{id}/match). */
  match(task: MatchTask): Promise<PathMatch[]> {
    return this.run({ kind: 'match', task }, 'matching') as Promise<PathMatch[]>
  }

  private run(task: { kind: 'parse'; input: ParseInput; context: ContextSnapshot } | { kind: 'match'; task: MatchTask }, doing: string): Promise<unknown> {
    const slot = this.pick()
    const id = this.nextId++
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        // The only way to stop runaway work is to end its thread; what else was queued on it fails too.
        this.pending.delete(id)
        reject(new ParseTimeout(`${doing} took longer than ${this.timeoutMs / 1000}s`))
        this.retire(slot, new Error('the parse worker was restarted: another task on it ran out of time'))
      }, this.timeoutMs)
      this.pending.set(id, { resolve, reject, timer, worker: slot })
      slot.busy++
      slot.worker.postMessage({ id, ...task } satisfies WorkerTask)
    })
  }

  /** Stops every worker; pending parses fail. */
  close() {
    for (const slot of [...this.slots]) this.retire(slot, new Error('the parse pool was closed'))
  }

  private pick(): Slot {
    if (this.slots.length < this.size) {
      const slot = this.spawn()
      this.slots.push(slot)
      return slot
    }
    return this.slots.reduce((a, b) => (b.busy < a.busy ? b : a))
  }

  private spawn(): Slot {
    const worker = new Worker(WORKER_URL)
    const slot: Slot = { worker, busy: 0 }
    worker.unref() // an idle pool must not keep a process (a test run, a CLI command) alive
    worker.onmessage = (event: MessageEvent<WorkerReply>) => {
      const reply = event.data
      const task = this.pending.get(reply.id)
      if (!task) return // timed out already
      this.pending.delete(reply.id)
      clearTimeout(task.timer)
      slot.busy--
      if (reply.ok) task.resolve(reply.result)
      else task.reject(reply.code ? new ParseFailure(reply.code, reply.message) : new Error(reply.message))
    }
    worker.onerror = (event) => this.retire(slot, new Error(`parse worker failed: ${event.message}`))
    // A thread that dies without an error event (out of memory, killed) must not leave its tasks
    // waiting for the timeout. After our own terminate() this finds nothing left to fail.
    worker.addEventListener('close', () => this.retire(slot, new Error('the parse worker exited')))
    return slot
  }

  /** Ends a worker and fails its tasks; the next parse spawns a fresh one in its place. */
  private retire(slot: Slot, error: Error) {
    const i = this.slots.indexOf(slot)
    if (i >= 0) this.slots.splice(i, 1)
    slot.worker.terminate()
    for (const [id, task] of this.pending) {
      if (task.worker !== slot) continue
      this.pending.delete(id)
      clearTimeout(task.timer)
      task.reject(error)
    }
  }
}
