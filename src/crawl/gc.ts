/**
 * The crawl's garbage-collection policy (decisions 67 and 78): explicit collections paced by time
 * and by pages, shared by every execution of the process.
 */
/** What the heap held after the last full collection (cells and string buffers), in bytes, and when. */
let liveAfterFullGc = 0
let lastGc = 0
let lastFullGc = 0
/** Pages finished by every execution of the process, and that count at the last collection of each kind. */
let pagesFinished = 0

/** Bytes of the bodies of those pages, and that count at the last collection of each kind. */
let bytesFinished = 0
let bytesAtGc = 0
let bytesAtFullGc = 0

/** A page of any execution of this process finished (pages pace the collections as much as time). */
export function pageFinished() {
  pagesFinished++
}

/** A body was read: its bytes pace the collections too (a large page leaves garbage in proportion). */
export function bodyRead(bytes: number) {
  bytesFinished += bytes
}

let pagesAtGc = 0
let pagesAtFullGc = 0
const GC_MS = 100
const GC_PAGES = 100
const FULL_GC_MS = 1000
const FULL_GC_PAGES = 1000
/** Full collections cost tens of ms: pages come as fast as they like (tiny pages, errors), these not. */
const FULL_GC_FLOOR_MS = 250
const GC_HEAP_STEP = 64 * 1024 * 1024
/** Bodies read pace them too: small pages reach the page counts first, a run of large ones these. */
const GC_BYTES = 4 * 1024 * 1024
const FULL_GC_BYTES = 32 * 1024 * 1024

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
 * 4 MB of bodies read also count as a young collection's worth, and 32 MB as a full one's.
 */
export function collectGarbage(now: number) {
  if (now - lastGc < GC_MS && pagesFinished - pagesAtGc < GC_PAGES && bytesFinished - bytesAtGc < GC_BYTES) return
  lastGc = now
  pagesAtGc = pagesFinished
  bytesAtGc = bytesFinished
  const scale = Math.max(1, liveAfterFullGc / GC_HEAP_STEP)
  const since = now - lastFullGc
  const due = pagesFinished - pagesAtFullGc >= FULL_GC_PAGES * scale || bytesFinished - bytesAtFullGc >= FULL_GC_BYTES * scale
  if (since < FULL_GC_MS * scale && (!due || since < FULL_GC_FLOOR_MS)) {
    Bun.gc(false)
    return
  }
  Bun.gc(true)
  pagesAtFullGc = pagesFinished
  bytesAtFullGc = bytesFinished
  lastFullGc = Date.now()
  const after = process.memoryUsage()
  liveAfterFullGc = after.heapUsed + after.external
}
