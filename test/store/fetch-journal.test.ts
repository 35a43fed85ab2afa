// The fetch journal of a run: what it keeps across a crash (a reopen stands for the next process),
// what it settles, and what it forgets.
import { afterAll, describe, expect, test } from 'bun:test'
import { appendFileSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { journalRuns, RunJournal, type JournalEntry } from '../../src/store/fetch-journal'

const root = mkdtempSync(join(tmpdir(), 'trawl-journal-'))
afterAll(() => rmSync(root, { recursive: true, force: true }))
let n = 0
const freshDir = () => join(root, `d${++n}`)
const entry = (i: number, step: JournalEntry['step'] = 'fetch'): JournalEntry => ({
  url: `http://127.0.0.1:9/p/${i}`,
  url_hash: `h${i}`,
  host: '127.0.0.1',
  step,
  depth: 1,
  parent_url_hash: 'h0',
  started_at: 1_700_000_000_000 + i,
})

describe('RunJournal', () => {
  test('a fetch started and not settled is an orphan for the next opener, with its entry whole', () => {
    const dir = freshDir()
    const j = RunJournal.open(dir, 7)
    expect(j.orphans()).toEqual([])
    const a = j.start(entry(1))
    const b = j.start(entry(2))
    const c = j.start(entry(3, 'robots'))
    j.logged(a)
    j.logged(b)
    j.committed()
    // No close: the process died here.
    const next = RunJournal.open(dir, 7)
    expect(next.orphans()).toEqual([{ ...entry(3, 'robots'), id: c }])
    // New ids go on past the old ones, so a settle never names an orphan by mistake.
    expect(next.start(entry(4))).toBeGreaterThan(c)
  })

  test('logged is not settled: only a commit settles', () => {
    const dir = freshDir()
    const j = RunJournal.open(dir, 1)
    j.logged(j.start(entry(1)))
    expect(
      RunJournal.open(dir, 1)
        .orphans()
        .map((o) => o.url),
    ).toEqual([entry(1).url])
  })

  test('orphans stay in the journal until the next holder has logged and committed them', () => {
    const dir = freshDir()
    RunJournal.open(dir, 2).start(entry(1))
    const second = RunJournal.open(dir, 2)
    const [orphan] = second.orphans()
    // The second holder dies before its commit: the third still finds the orphan.
    expect(RunJournal.open(dir, 2).orphans()).toHaveLength(1)
    second.logged(orphan!.id)
    second.committed()
    expect(RunJournal.open(dir, 2).orphans()).toEqual([])
  })

  test('a line cut short by a crash is ignored, the lines before it kept', () => {
    const dir = freshDir()
    const j = RunJournal.open(dir, 3)
    const first = j.start(entry(1))
    appendFileSync(join(dir, '3.log'), `s ${first + 1} {"url":"http://127.0.0.1:9/p/2","url_ha`)
    const next = RunJournal.open(dir, 3)
    expect(next.orphans().map((o) => o.id)).toEqual([first])
  })

  test('close removes the file when nothing is open, keeps it otherwise, and discard removes it anyway', () => {
    const dir = freshDir()
    const done = RunJournal.open(dir, 4)
    done.logged(done.start(entry(1)))
    done.committed()
    done.close()
    expect(existsSync(join(dir, '4.log'))).toBe(false)
    const open = RunJournal.open(dir, 5)
    open.start(entry(1))
    open.close()
    expect(existsSync(join(dir, '5.log'))).toBe(true)
    expect(journalRuns(dir)).toEqual([5])
    const gone = RunJournal.open(dir, 5)
    gone.close(true)
    expect(existsSync(join(dir, '5.log'))).toBe(false)
  })

  test('a long journal is rewritten with only what is open, and reads back the same', () => {
    const dir = freshDir()
    const j = RunJournal.open(dir, 6)
    const keep = j.start(entry(0))
    for (let i = 1; i <= 5000; i++) {
      j.logged(j.start(entry(i)))
      if (i % 10 === 0) j.committed()
    }
    j.committed()
    const lines = readFileSync(join(dir, '6.log'), 'utf8').split('\n').filter(Boolean)
    // 5,500 lines were written; past 4,096 the file starts over with what is open.
    expect(lines.length).toBeLessThan(2000)
    expect(lines[0]).toStartWith(`s ${keep} `)
    expect(
      RunJournal.open(dir, 6)
        .orphans()
        .map((o) => o.id),
    ).toEqual([keep])
  })

  test('bodies: open until their rows commit, then settled; an earlier holder’s come back as orphans', () => {
    const dir = freshDir()
    const j = RunJournal.open(dir, 8)
    const a = j.startBody('runs/r/a')
    const b = j.startBody('runs/r/b')
    const f = j.start(entry(1))
    j.logged(a)
    j.committed()
    expect(j.openBodies()).toEqual([{ id: b, key: 'runs/r/b' }])
    const next = RunJournal.open(dir, 8)
    expect(next.orphanBodies()).toEqual([{ id: b, key: 'runs/r/b' }])
    expect(next.orphans().map((o) => o.id)).toEqual([f])
    // A commit that failed settles nothing, even at the next commit that succeeds.
    next.logged(b)
    next.rolledBack()
    next.committed()
    expect(
      RunJournal.open(dir, 8)
        .orphanBodies()
        .map((x) => x.key),
    ).toEqual(['runs/r/b'])
  })

  test('a body line cut short is not a shorter key', () => {
    const dir = freshDir()
    RunJournal.open(dir, 9).startBody('runs/r/whole')
    appendFileSync(join(dir, '9.log'), 'b 99 runs/r/who')
    expect(
      RunJournal.open(dir, 9)
        .orphanBodies()
        .map((x) => x.key),
    ).toEqual(['runs/r/whole'])
  })

  test('abandon writes nothing more and keeps the file for the holder that took the run', () => {
    const dir = freshDir()
    const j = RunJournal.open(dir, 10)
    const id = j.start(entry(1))
    j.logged(id)
    j.abandon()
    j.committed()
    j.close()
    expect(
      RunJournal.open(dir, 10)
        .orphans()
        .map((o) => o.id),
    ).toEqual([id])
  })

  test('without a directory (a database in memory) it writes nothing and remembers nothing', () => {
    const j = RunJournal.open(null, 1)
    j.start(entry(1))
    j.committed()
    expect(RunJournal.open(null, 1).orphans()).toEqual([])
  })

  test('only <run seq>.log files are journals', () => {
    const dir = freshDir()
    RunJournal.open(dir, 12).start(entry(1))
    writeFileSync(join(dir, '12.log.tmp'), '')
    writeFileSync(join(dir, 'notes.txt'), '')
    expect(journalRuns(dir)).toEqual([12])
    expect(journalRuns(join(dir, 'missing'))).toEqual([])
  })
})
