-- The crawl engine's state (design.md §5). Tables of a run go with it (ON DELETE CASCADE).

-- The process executing a run holds it by a lease it renews (design.md §5: one process per run).
ALTER TABLE runs ADD COLUMN lease_owner TEXT;
ALTER TABLE runs ADD COLUMN lease_until INTEGER;
-- URLs that got an HTTP response (what max_urls counts), and whether max_depth cut a link.
ALTER TABLE runs ADD COLUMN fetched INTEGER NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN depth_cut INTEGER NOT NULL DEFAULT 0;

-- One row per normalized URL a run has seen. state: 0 queued, 1 leased, 2 done, 3 failed.
-- kind: 0 page, 1 asset (fetched and stored, never parsed for links).
CREATE TABLE frontier (
  run_seq     INTEGER NOT NULL REFERENCES runs (seq) ON DELETE CASCADE,
  hash        TEXT    NOT NULL,
  url         TEXT    NOT NULL,
  host        TEXT    NOT NULL,
  depth       INTEGER NOT NULL,
  parent      TEXT,
  kind        INTEGER NOT NULL DEFAULT 0,
  state       INTEGER NOT NULL DEFAULT 0,
  attempts    INTEGER NOT NULL DEFAULT 0,
  not_before  INTEGER NOT NULL DEFAULT 0,
  lease_until INTEGER,
  seq         INTEGER NOT NULL,
  PRIMARY KEY (run_seq, hash)
) WITHOUT ROWID;
-- What is still to visit, in discovery order (what a resumed execution loads). Partial, so that
-- marking a URL done removes one entry instead of moving it.
CREATE INDEX frontier_todo ON frontier (run_seq, seq) WHERE state IN (0, 1);

-- Per host of a run: robots.txt as fetched (kept so a resumed run does not fetch it again),
-- and the politeness state that must survive a restart.
CREATE TABLE run_hosts (
  run_seq       INTEGER NOT NULL REFERENCES runs (seq) ON DELETE CASCADE,
  host          TEXT    NOT NULL,
  robots_status INTEGER,          -- HTTP status of robots.txt, -1 unreachable, null not fetched
  robots_body   TEXT,
  failures      INTEGER NOT NULL DEFAULT 0,  -- consecutive failed fetches
  PRIMARY KEY (run_seq, host)
) WITHOUT ROWID;

-- Links visited by a run (SPEC: a visited link has a depth and a visited timestamp).
CREATE TABLE visits (
  seq        INTEGER PRIMARY KEY,
  run_seq    INTEGER NOT NULL REFERENCES runs (seq) ON DELETE CASCADE,
  hash       TEXT    NOT NULL,   -- links.hash of the same tenant
  host_hash  TEXT    NOT NULL,
  depth      INTEGER NOT NULL,
  status     INTEGER,            -- HTTP status, null when the fetch failed
  visited_at INTEGER NOT NULL
);
CREATE UNIQUE INDEX visits_once ON visits (run_seq, hash);
CREATE INDEX visits_by_run ON visits (run_seq, seq);

-- Parent → child links discovered by a run: every in-scope link of a visited page.
CREATE TABLE edges (
  seq         INTEGER PRIMARY KEY,
  run_seq     INTEGER NOT NULL REFERENCES runs (seq) ON DELETE CASCADE,
  parent      TEXT    NOT NULL,  -- links.hash
  child       TEXT    NOT NULL,  -- links.hash
  created_at  INTEGER NOT NULL,
  UNIQUE (run_seq, parent, child)
);
CREATE INDEX edges_by_run ON edges (run_seq, seq);
-- No (run_seq, child) index: children are random keys, and that index cost a crawl about
-- 0.3 ms per page of 20 links. Edges by child walk the run's (run_seq, parent, child) entries.
