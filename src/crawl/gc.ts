/**
 * The crawl's garbage-collection policy (decisions 67 and 78): explicit collections paced by time
 * and by pages, shared by every execution of the process.
 */
/** What the heap held after the last full collection (cells and string buffers), in bytes. */
let liveAfterFullGc = 0
/** Pages finished and body bytes read by every execution of the process, since it started. */
let pagesFinished = 0
let bytesFinished = 0

/** When a collection of one kind was made, and the pages and bytes counted then. */
type Mark = { at: number; pages: number; bytes: number }
const young: Mark = { at: 0, pages: 0, bytes: 0 }
const full: Mark = { at: 0, pages: 0, bytes: 0 }
const mark = (m: Mark, at: number) => {
  m.at = at
  m.pages = pagesFinished
  m.bytes = bytesFinished
}

/** A page of any execution of this process finished (pages pace the collections as much as time). */
export function pageFinished() {
  pagesFinished++
}

/** A body was read: its bytes pace the collections too (a large page leaves garbage in proportion). */
export function bodyRead(bytes: number) {
  bytesFinished += bytes
}

/** What makes a collection of one kind due since its last: time, pages finished, body bytes read. */
type Limits = { ms: number; pages: number; bytes: number }
const YOUNG: Limits = { ms: 100, pages: 100, bytes: 4 * 1024 * 1024 }
const FULL: Limits = { ms: 1000, pages: 1000, bytes: 16 * 1024 * 1024 }
/** Full collections cost tens of ms: pages come as fast as they like (tiny pages, errors), these not. */
const FULL_GC_FLOOR_MS = 250
const GC_HEAP_STEP = 64 * 1024 * 1024

/** Whether enough pages or bytes came since the mark (the limits times `scale`). */
const counted = (m: Mark, limits: Limits, scale: number) => pagesFinished - m.pages >= limits.pages * scale || bytesFinished - m.bytes >= limits.bytes * scale

/**
 * A young-generation collection every 100 ms or 100 pages, whichever comes first, and a full one
 * every second or 1,000 pages, but never within 250 ms of the last (the second and the pages
 * are spaced out by as much again per 64 MB live after the last full one).
 * A crawl makes a page's worth of garbage per fetch, and
 * JavaScriptCore lets the heap grow to several times what is live before it collects: a
 * 20,000-page crawl peaked at about 250 MB with an asynchronous collection every second. A full
 * collection every 200 ms held it at 130 MB but took a fifth of the crawl thread (about 40 ms
 * each); most of a page's garbage dies young, so frequent young collections (well under a
 * millisecond each) and a rarer full one hold it at 125-130 MB for a twentieth (decision 67).
 * Garbage comes with pages, not time: when the crawl got faster, collections by time alone let
 * the peak rise with it (134 MB at 1,400 pages/s), so pages count too (126-128 MB; decision 78).
 * A full collection costs in proportion to what is live, so a large run's are spaced out.
 * Large pages leave garbage in proportion to their bytes (a 3.7 MB page added 22 MB), so every
 * 4 MB of bodies read also count as a young collection's worth, and 16 MB as a full one's
 * (decision 108: libstdc++'s reference peaked at 156-162 MB with 32 MB, 147-148 MB with 16 MB,
 * for no CPU that alternated pairs could tell; pages of a few KB reach the page count first).
 */
export function collectGarbage(now: number) {
  if (now - young.at < YOUNG.ms && !counted(young, YOUNG, 1)) return
  mark(young, now)
  const scale = Math.max(1, liveAfterFullGc / GC_HEAP_STEP)
  const since = now - full.at
  if (since < FULL.ms * scale && (!counted(full, FULL, scale) || since < FULL_GC_FLOOR_MS)) {
    Bun.gc(false)
    return
  }
  Bun.gc(true)
  mark(full, Date.now())
  const after = process.memoryUsage()
  liveAfterFullGc = after.heapUsed + after.external
}
