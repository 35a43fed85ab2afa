#!/usr/bin/env bun
// The floor of the crawl bench (not a test, not a crawler to use): the least a crawler on Bun
// does a page and still records it in SQLite. `bun scripts/bench/crawl.ts --only trawl,floor`
// runs it in every round beside trawl, so that trawl's CPU a page can be read against it in the
// same minutes.
//
//   bun scripts/bench/floor-crawler.ts START_URL MAX_PAGES CONCURRENCY DATA_DIR
//
// Per page: one fetch() and its body; links found by one regex over the decoded text (href="…"
// up to a '#'), resolved with URL.parse unless root-relative, kept on the start URL's origin,
// deduplicated by a Set; then, every 16 pages, one transaction in each of two WAL databases: the
// bodies in blobs.db; in main.db a links row and a frontier row per new URL, the page's frontier
// row marked done, a visits row with its children's hashes, a log row with a random id, and one
// artifact row with four secondary indexes. Hashes are Bun.hash, twice, in hex.
//
// What it leaves out is what trawl does besides: a tag walk (it would take an href in a comment,
// a script or an attribute value for a link), character references, <base>, rel=nofollow, anchor
// texts and metadata, the parsed artifact, robots.txt, per-host politeness, scope rules, the
// fetch journal (a kill loses its batch), the address guard, redirects as SPEC records them,
// retries, and the lease. Prints one JSON line: {"pages": N}.
import { Database } from 'bun:sqlite'

const [start, maxArg, concurrencyArg, dir] = process.argv.slice(2)
if (!start || !maxArg || !concurrencyArg || !dir) {
  console.error('usage: bun scripts/bench/floor-crawler.ts START_URL MAX_PAGES CONCURRENCY DATA_DIR')
  process.exit(2)
}
const MAX = Number(maxArg)
const origin = new URL(start).origin

const open = (file: string) => {
  const db = new Database(`${dir}/${file}`, { create: true })
  db.exec('PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA wal_autocheckpoint = 16000')
  return db
}
const db = open('main.db')
const blobs = open('blobs.db')
db.exec(`
  CREATE TABLE links (seq INTEGER PRIMARY KEY, tenant TEXT, hash TEXT, url TEXT, UNIQUE (tenant, hash));
  CREATE TABLE frontier (run_seq INTEGER, seq INTEGER, hash TEXT, url TEXT, state INTEGER, PRIMARY KEY (run_seq, seq)) WITHOUT ROWID;
  CREATE TABLE visits (seq INTEGER PRIMARY KEY, run_seq INTEGER, hash TEXT, status INTEGER, visited_at INTEGER, children TEXT, UNIQUE (run_seq, hash));
  CREATE TABLE logs (seq INTEGER PRIMARY KEY, run_seq INTEGER, id TEXT, hash TEXT, step TEXT, status TEXT, at INTEGER);
  CREATE INDEX logs_by_run ON logs (run_seq, seq);
  CREATE TABLE artifacts (seq INTEGER PRIMARY KEY, tenant TEXT, id TEXT, run_id TEXT, url_hash TEXT, blob_key TEXT, kind TEXT, size INTEGER, created_at INTEGER, UNIQUE (tenant, id));
  CREATE INDEX artifacts_by_run ON artifacts (tenant, run_id, seq);
  CREATE INDEX artifacts_by_tenant ON artifacts (tenant, seq);
  CREATE INDEX artifacts_by_url ON artifacts (tenant, url_hash, seq);
  CREATE INDEX artifacts_by_blob ON artifacts (blob_key, tenant);
`)
blobs.exec('CREATE TABLE blobs (key TEXT PRIMARY KEY, size INTEGER, body BLOB)')
const insertLink = db.query("INSERT OR IGNORE INTO links (tenant, hash, url) VALUES ('t', ?, ?)")
const enqueue = db.query('INSERT INTO frontier VALUES (1, ?, ?, ?, 0)')
const done = db.query('UPDATE frontier SET state = 2 WHERE run_seq = 1 AND seq = ?')
const insertVisit = db.query('INSERT INTO visits (run_seq, hash, status, visited_at, children) VALUES (1, ?, ?, ?, ?)')
const insertLog = db.query("INSERT INTO logs (run_seq, id, hash, step, status, at) VALUES (1, ?, ?, 'fetch', 'ok', ?)")
const insertArtifact = db.query("INSERT INTO artifacts (tenant, id, run_id, url_hash, blob_key, kind, size, created_at) VALUES ('t', ?, 'r', ?, ?, 'raw', ?, ?)")
const putBody = blobs.query('INSERT INTO blobs VALUES (?, ?, ?)')

const hashOf = (url: string) => Bun.hash(url).toString(16).padStart(16, '0') + Bun.hash(`${url}#`).toString(16).padStart(16, '0')
type Entry = { url: string; seq: number; hash: string }
type Page = { seq: number; hash: string; status: number; children: string; body: Uint8Array; fresh: Entry[] }

const seen = new Set<string>([start])
const queue: Entry[] = [{ url: start, seq: 1, hash: hashOf(start) }]
let seqs = 1
let fetched = 0
let inFlight = 0
let batch: Page[] = []

function commit() {
  const pages = batch
  batch = []
  blobs.transaction(() => {
    for (const p of pages) putBody.run(`r/${p.hash}`, p.body.byteLength, p.body)
  })()
  db.transaction(() => {
    const now = Date.now()
    for (const p of pages) {
      for (const e of p.fresh) {
        insertLink.run(e.hash, e.url)
        enqueue.run(e.seq, e.hash, e.url)
      }
      done.run(p.seq)
      insertVisit.run(p.hash, p.status, now, p.children)
      insertLog.run(crypto.randomUUID(), p.hash, now)
      insertArtifact.run(Bun.randomUUIDv7(), p.hash, `r/${p.hash}`, p.body.byteLength, now)
    }
  })()
}

const HREF = /href="([^"#]*)/g
const decoder = new TextDecoder()

async function worker() {
  while (fetched < MAX) {
    const entry = queue.shift()
    if (!entry) {
      if (!inFlight) return
      await Bun.sleep(1)
      continue
    }
    inFlight++
    const res = await fetch(entry.url)
    const body = new Uint8Array(await res.arrayBuffer())
    fetched++
    const children: string[] = []
    const fresh: Entry[] = []
    const onPage = new Set<string>()
    for (const m of decoder.decode(body).matchAll(HREF)) {
      const href = m[1]!
      const url = href.startsWith('/') && !href.startsWith('//') ? origin + href : URL.parse(href, entry.url)?.href
      if (!url || !url.startsWith(`${origin}/`) || onPage.has(url)) continue
      onPage.add(url)
      const hash = hashOf(url)
      children.push(hash)
      if (!seen.has(url) && seen.size < MAX) {
        seen.add(url)
        const e = { url, seq: ++seqs, hash }
        fresh.push(e)
        queue.push(e)
      }
    }
    batch.push({ seq: entry.seq, hash: entry.hash, status: res.status, children: children.join(''), body, fresh })
    if (batch.length >= 16) commit()
    inFlight--
  }
}

await Promise.all(Array.from({ length: Number(concurrencyArg) }, worker))
if (batch.length) commit()
db.close()
blobs.close()
console.log(JSON.stringify({ pages: fetched }))
