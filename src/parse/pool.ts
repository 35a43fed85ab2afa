import type { DataMapDef } from '../extract/data-map'
import type { PathMatch, PatternSetDef } from '../extract/patterns'
import { workerUrl } from '../util/worker-url'
import { baseUrlOf, dataMapIds, ParseFailure, type ParseContext, type ParseInput, type ParseResult } from './pipeline'

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
/** What a worker posts once its modules have loaded, before any reply. */
export type WorkerReady = { ready: true }

/** Resolves, on the main thread, every lookup the pipelines of `input` can make. */
export function snapshotContext(input: ParseInput, ctx: ParseContext): ContextSnapshot {
  const wantsCategory = input.pipelines.some((p) => p.guards?.some((g) => g.kind === 'category'))
  const maps: Record<string, DataMapDef> = {}
  for (const id of dataMapIds(input.pipelines)) {
    const map = ctx.dataMap(id)
    if (map) maps[id] = map
  }
  return { sets: wantsCategory ? ctx.patternSets(baseUrlOf(input.url, input.redirects)) : [], maps }
}

/** The ParseContext a worker answers from a snapshot. */
export const contextOf = (snapshot: ContextSnapshot): ParseContext => ({
  patternSets: () => snapshot.sets,
  dataMap: (id) => (Object.hasOwn(snapshot.maps, id) ? snapshot.maps[id]! : null),
})

// scripts/build.ts embeds worker.ts in the binary; test/e2e parses through the binary.
const WORKER_URL = workerUrl(import.meta.url, 'parse', 'worker.ts')

/** A task that ran out of time; the worker doing it is replaced. */
export class ParseTimeout extends Error {}

/** A task that could not finish for a reason of the pool's (a worker died, the pool closed). */
export class PoolError extends Error {}

type Work = { kind: 'parse'; input: ParseInput; context: ContextSnapshot } | { kind: 'match'; task: MatchTask }
type Task = { id: number; work: Work; doing: string; resolve: (r: unknown) => void; reject: (e: Error) => void }
type Slot = { worker: Worker; ready: boolean; current: { task: Task; timer: Timer } | null }

/**
 * How long a new worker may take to load its modules. From source that is a few hundred
 * milliseconds of transpiling, more on a loaded machine; it is not the task's work, so it does
 * not count against the task's limit, but a worker that never comes up must not hold its task.
 */
const STARTUP_LIMIT_MS = 30_000

/**
 * A fixed number of worker threads, each doing one task at a time. Tasks wait in the pool, in
 * one queue per lane (a tenant), and idle workers take them lanes in turn: a tenant's 64-item
 * batch does not make another tenant's single parse wait for all of it. A task's time limit
 * starts when a ready worker takes it, so neither waiting in the queue nor a new worker's start
 * counts against it, and replacing a worker that ran out of time fails only the task it was doing.
 */
export class ParsePool {
  private readonly slots: Slot[] = []
  private readonly lanes = new Map<string, Task[]>()
  private nextId = 1
  private closed = false

  constructor(
    private readonly size: number,
    /** A task taking longer than this is abandoned and its worker replaced. */
    private readonly timeoutMs: number,
    /** A new worker not loaded after this long fails the task it was given (tests shorten it). */
    private readonly startupMs = STARTUP_LIMIT_MS,
  ) {}

  /** Parses `input` on a worker; the context lookups are made here first. */
  parse(input: ParseInput, ctx: ParseContext, lane = ''): Promise<ParseResult> {
    return this.run({ kind: 'parse', input, context: snapshotContext(input, ctx) }, 'parsing', lane) as Promise<ParseResult>
  }

  /** Tests paths against a pattern set on a worker (POST /v1/patterns/{id}/match). */
  match(task: MatchTask, lane = ''): Promise<PathMatch[]> {
    return this.run({ kind: 'match', task }, 'matching', lane) as Promise<PathMatch[]>
  }

  /** Stops every worker; queued and running tasks fail. */
  close() {
    this.closed = true
    const error = new PoolError('the parse pool was closed')
    for (const queue of this.lanes.values()) for (const task of queue) task.reject(error)
    this.lanes.clear()
    for (const slot of [...this.slots]) this.retire(slot, error)
  }

  private run(work: Work, doing: string, lane: string): Promise<unknown> {
    if (this.closed) return Promise.reject(new PoolError('the parse pool was closed'))
    return new Promise((resolve, reject) => {
      const task: Task = { id: this.nextId++, work, doing, resolve, reject }
      const queue = this.lanes.get(lane)
      if (queue) queue.push(task)
      else this.lanes.set(lane, [task])
      this.dispatch()
    })
  }

  /** Hands queued tasks to idle workers (starting workers up to the pool size), lanes in turn. */
  private dispatch() {
    while (this.lanes.size > 0) {
      const slot = this.slots.find((s) => s.current === null) ?? (this.slots.length < this.size ? this.spawn() : null)
      if (!slot) return
      // Map order is insertion order: take the first lane's task, then move the lane to the back.
      const [lane, queue] = this.lanes.entries().next().value as [string, Task[]]
      const task = queue.shift()!
      this.lanes.delete(lane)
      if (queue.length > 0) this.lanes.set(lane, queue)
      this.start(slot, task)
    }
  }

  private start(slot: Slot, task: Task) {
    // A worker still loading holds the message until it is up; its task's clock starts then.
    const timer = slot.ready ? this.taskTimer(slot, task) : this.startupTimer(slot)
    slot.current = { task, timer }
    slot.worker.postMessage({ id: task.id, ...task.work } satisfies WorkerTask)
  }

  private startupTimer(slot: Slot): Timer {
    return setTimeout(() => this.retire(slot, new PoolError('the parse worker did not start')), this.startupMs)
  }

  private taskTimer(slot: Slot, task: Task): Timer {
    return setTimeout(() => {
      // The only way to stop runaway work is to end its thread.
      this.retire(slot, new ParseTimeout(`${task.doing} took longer than ${this.timeoutMs / 1000}s`))
    }, this.timeoutMs)
  }

  private spawn(): Slot {
    const worker = new Worker(WORKER_URL)
    const slot: Slot = { worker, ready: false, current: null }
    this.slots.push(slot)
    worker.unref() // an idle pool must not keep a process (a test run, a CLI command) alive
    worker.onmessage = (event: MessageEvent<WorkerReply | WorkerReady>) => {
      const reply = event.data
      if ('ready' in reply) {
        slot.ready = true
        if (slot.current) {
          clearTimeout(slot.current.timer)
          slot.current.timer = this.taskTimer(slot, slot.current.task)
        }
        return
      }
      const running = slot.current
      if (!running || running.task.id !== reply.id) return // retired meanwhile
      clearTimeout(running.timer)
      slot.current = null
      if (reply.ok) running.task.resolve(reply.result)
      else running.task.reject(reply.code ? new ParseFailure(reply.code, reply.message) : new Error(reply.message))
      this.dispatch()
    }
    worker.onerror = (event) => this.retire(slot, new PoolError(`the parse worker failed: ${event.message}`))
    // A thread that dies without an error event (out of memory, killed) must not leave its task
    // waiting for the time limit. After our own terminate() there is nothing left to fail.
    worker.addEventListener('close', () => this.retire(slot, new PoolError('the parse worker exited')))
    return slot
  }

  /** Ends a worker and fails the task it was doing; queued tasks go to the other workers or a new one. */
  private retire(slot: Slot, error: Error) {
    const i = this.slots.indexOf(slot)
    if (i < 0) return
    this.slots.splice(i, 1)
    slot.worker.terminate()
    const running = slot.current
    slot.current = null
    if (running) {
      clearTimeout(running.timer)
      running.task.reject(error)
    }
    if (!this.closed) this.dispatch()
  }
}
