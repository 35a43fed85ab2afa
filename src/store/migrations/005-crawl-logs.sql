-- Crawl log entries (SPEC Crawl log entry, design.md §5): one per URL per step, written in batches.
CREATE TABLE crawl_logs (
  seq             INTEGER PRIMARY KEY,
  run_seq         INTEGER NOT NULL REFERENCES runs (seq) ON DELETE CASCADE,
  id              TEXT    NOT NULL,
  url             TEXT    NOT NULL,
  url_hash        TEXT    NOT NULL,
  host            TEXT    NOT NULL,
  step            TEXT    NOT NULL,
  status          TEXT    NOT NULL,
  pipeline_id     TEXT,
  error_reason    TEXT,
  error_detail    TEXT,
  http_status     INTEGER,
  latency_ms      REAL,
  depth           INTEGER,
  parent_url_hash TEXT,
  occurred_at     INTEGER NOT NULL
);
-- Every index costs the writer on the crawl's hot path (measured: the host index alone halves
-- inserts/s, the two partial ones cost little), so there are just enough for the list filters.
-- The rowid (seq) ends every index, so each one also walks in (occurred_at, seq) order: the
-- list's keyset order, newest first. by_time also serves the run's cascading delete and the
-- time range scans of metrics and latency.
CREATE INDEX crawl_logs_by_time ON crawl_logs (run_seq, occurred_at);
-- "This host's entries": a host may hold most of a run, so its own ordered walk.
CREATE INDEX crawl_logs_by_host ON crawl_logs (run_seq, host, occurred_at);
-- Errors and non-ok outcomes are rare in a healthy run: small partial indexes find them
-- without walking the ok entries around them.
CREATE INDEX crawl_logs_errors ON crawl_logs (run_seq, error_reason, occurred_at) WHERE error_reason IS NOT NULL;
CREATE INDEX crawl_logs_not_ok ON crawl_logs (run_seq, status, occurred_at) WHERE status <> 'ok';
