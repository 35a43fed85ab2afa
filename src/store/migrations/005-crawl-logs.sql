-- Crawl log entries (SPEC Crawl log entry, DESIGN §5): one per URL per step, written in batches.
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
CREATE INDEX crawl_logs_by_run ON crawl_logs (run_seq, seq);
