import { closeSync, fsyncSync, mkdirSync, openSync, readdirSync, readFileSync, renameSync, rmSync, writeSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { isValidKey } from '../blob/blob-store'

/**
 * What a crawl log entry needs of a fetch that was sent, to be written later if the process
 * dies before the fetch's own entry is committed.
 */
export type JournalEntry = {
  url: string
  url_hash: string
  host: string
  /** The crawl log step the fetch would have been logged under. */
  step: 'fetch' | 'robots' | 'discover'
  depth?: number
  parent_url_hash?: string
  /** Epoch milliseconds. */
  started_at: number
}

/** A started fetch of an earlier holder of the run, never settled: it has no crawl log entry. */
export type Orphan = JournalEntry & { id: number }

/** A body put in the blob store whose artifact row was not (yet) committed. */
export type JournalBody = { id: number; key: string }

/**
 * The fetch journal of one run: every fetch the crawl sends is appended before it is sent, and
 * settled once its crawl log entry has been committed. A crawl commits its pages in batches
 * (every 250 ms), so a `kill -9` loses the entries of the fetches since the last commit while
 * the servers have seen them; the journal is what tells the next holder of the run which
 * fetches those were, so each still gets its entry (crawl.md, "What a run records").
 *
 * One append-only file per run beside the database (`journal/<run seq>.log`), written with one
 * `write(2)` per fetch: that is in the kernel, and so survives the process, when it returns,
 * for a few microseconds, where a SQLite commit per fetch would cost a write of every page it
 * touched. Power loss can lose its tail, as it can the WAL's (synchronous = NORMAL).
 *
 * The same goes for the bodies the crawl puts in the blob store before their artifact rows
 * commit: a body whose row a crash (or a stop, or a lost lease) kept from the database is named
 * here, so it can be deleted rather than outlive its run unseen.
 *
 * Lines: `s <id> <json>` a fetch started, `b <id> <key>` a body about to be put, `d <id> …`
 * settled. A line cut short by a crash is ignored. The file is rewritten (temp file and rename)
 * with only what is still open once it has grown past ROTATE_LINES, after a commit.
 */
export class RunJournal {
  private fd: number | null = null
  private nextId = 1
  /** Started and not yet settled, by id: what a rotation keeps (the line without its id). */
  private readonly open = new Map<number, string>()
  /** Logged since the last commit: settled by the next one. */
  private pending: number[] = []
  private lines = 0

  private constructor(
    private readonly path: string | null,
    private readonly leftovers: Orphan[],
    private readonly leftoverBodies: JournalBody[],
  ) {}

  /**
   * Opens the run's journal, reading what an earlier holder left unsettled (`orphans()`). With
   * `dir` null (a database in memory) nothing is written: there is nothing to survive a crash.
   */
  static open(dir: string | null, runSeq: number): RunJournal {
    if (dir === null) return new RunJournal(null, [], [])
    const path = journalPath(dir, runSeq)
    const { open, maxId } = readJournal(path)
    const fetches: Orphan[] = []
    const bodies: JournalBody[] = []
    for (const [id, line] of open) {
      if (line.startsWith('s ')) fetches.push({ ...(JSON.parse(line.slice(2)) as JournalEntry), id })
      else bodies.push({ id, key: line.slice(2) })
    }
    const journal = new RunJournal(path, fetches, bodies)
    // Past every id in the file, and past any a stalled earlier holder (one that lost the run
    // to this one and has not noticed yet) may still append: its counter starts from what it
    // read, so a random offset keeps the two from settling each other's lines.
    journal.nextId = maxId + 1 + Math.floor(Math.random() * 2 ** 32)
    for (const [id, line] of open) journal.open.set(id, line)
    journal.lines = open.size
    mkdirSync(dirname(path), { recursive: true })
    journal.fd = openSync(path, 'a')
    return journal
  }

  /**
   * Fetches an earlier holder started and never settled. They stay open in the journal until
   * the caller has logged them (`logged`) and committed, so a crash meanwhile finds them again.
   */
  orphans(): Orphan[] {
    return this.leftovers
  }

  /** Bodies an earlier holder put whose rows may never have been committed; open like `orphans`. */
  orphanBodies(): JournalBody[] {
    return this.leftoverBodies
  }

  /** Every body still open: an earlier holder's, and this one's whose rows have not been committed. */
  openBodies(): JournalBody[] {
    const out: JournalBody[] = []
    for (const [id, line] of this.open) if (line.startsWith('b ')) out.push({ id, key: line.slice(2) })
    return out
  }

  /** Records a fetch about to be sent; answers its id, for `logged`. */
  start(entry: JournalEntry): number {
    return this.append('s', JSON.stringify(entry))
  }

  /** Records a body about to be put under `key`; answers its id, settled with the row's commit (`logged`). */
  startBody(key: string): number {
    return this.append('b', key)
  }

  private append(kind: 's' | 'b', rest: string): number {
    const id = this.nextId++
    if (this.fd === null) return id
    this.open.set(id, `${kind} ${rest}`)
    this.write(`${kind} ${id} ${rest}\n`)
    return id
  }

  /** The fetch's crawl log entry (or the body's artifact row) is buffered: settled by the next successful commit. */
  logged(id: number) {
    if (this.fd !== null) this.pending.push(id)
  }

  /** The crawl's commit failed: what was logged for it is not settled by a later one. */
  rolledBack() {
    this.pending = []
  }

  /** The crawl's commit succeeded: every fetch logged before it is settled. */
  committed() {
    if (this.fd === null || !this.pending.length) return
    for (const id of this.pending) this.open.delete(id)
    this.write(`d ${this.pending.join(' ')}\n`)
    this.pending = []
    if (this.lines > ROTATE_LINES) this.rotate()
  }

  /** A commit that carried these entries' rows succeeded: they are settled (a batch's own, not every pending one). */
  settle(ids: number[]) {
    if (this.fd === null || !ids.length) return
    for (const id of ids) this.open.delete(id)
    this.write(`d ${ids.join(' ')}\n`)
    if (this.lines > ROTATE_LINES) this.rotate()
  }

  /**
   * Closes the file, removing it when nothing is left open (the usual end of an execution) or
   * when the run is gone (`discard`).
   */
  close(discard = false) {
    if (this.fd === null) return
    closeSync(this.fd)
    this.fd = null
    if (this.open.size === 0 || discard) rmSync(this.path!, { force: true })
  }

  /**
   * Closes without another line and keeps the file: the run went to another process, which
   * reads and writes this journal now.
   */
  abandon() {
    if (this.fd === null) return
    closeSync(this.fd)
    this.fd = null
  }

  private write(text: string) {
    writeSync(this.fd!, text)
    this.lines++
  }

  /** Rewrites the journal with only its open fetches; the rename is atomic, so a crash leaves one or the other. */
  private rotate() {
    const path = this.path!
    const temp = `${path}.tmp`
    let text = ''
    for (const [id, line] of this.open) text += `${line[0]} ${id}${line.slice(1)}\n`
    const fd = openSync(temp, 'w')
    try {
      writeSync(fd, text)
      fsyncSync(fd)
    } finally {
      closeSync(fd)
    }
    renameSync(temp, path)
    closeSync(this.fd!)
    this.fd = openSync(path, 'a')
    this.lines = this.open.size
  }
}

/** The run seqs that have a journal in `dir`. */
export function journalRuns(dir: string | null): number[] {
  if (dir === null) return []
  let names: string[]
  try {
    names = readdirSync(dir)
  } catch {
    return []
  }
  return names.flatMap((n) => (/^\d+\.log$/.test(n) ? [Number(n.slice(0, -4))] : []))
}

/** Where a database's run journals live: `journal/` beside it; null for a database in memory. */
export function journalDir(databaseFile: string): string | null {
  return databaseFile && databaseFile !== ':memory:' ? join(dirname(databaseFile), 'journal') : null
}

const ROTATE_LINES = 4096

const journalPath = (dir: string, runSeq: number) => join(dir, `${runSeq}.log`)

function readJournal(path: string): { open: Map<number, string>; maxId: number } {
  const open = new Map<number, string>()
  let maxId = 0
  let text: string
  try {
    text = readFileSync(path, 'utf8')
  } catch {
    return { open, maxId }
  }
  const lines = text.split('\n')
  // The last line has no newline when a crash cut it short (a body's key would read as a shorter key).
  lines.pop()
  for (const line of lines) {
    if (line.startsWith('s ') || line.startsWith('b ')) {
      const space = line.indexOf(' ', 2)
      const id = Number(line.slice(2, space))
      const rest = line.slice(space + 1)
      if (space < 0 || !(id > 0) || (line[0] === 's' ? !validEntry(rest) : !isValidKey(rest))) continue
      open.set(id, `${line[0]} ${rest}`)
      maxId = Math.max(maxId, id)
    } else if (line.startsWith('d ')) {
      for (const part of line.slice(2).split(' ')) {
        const id = Number(part)
        if (id > 0) open.delete(id)
      }
    }
  }
  return { open, maxId }
}

function validEntry(json: string): boolean {
  try {
    const e = JSON.parse(json) as JournalEntry
    return typeof e.url === 'string' && typeof e.url_hash === 'string' && typeof e.host === 'string' && typeof e.started_at === 'number' && ['fetch', 'robots', 'discover'].includes(e.step)
  } catch {
    return false
  }
}
