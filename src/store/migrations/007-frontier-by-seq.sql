-- The frontier keyed by (run_seq, seq) instead of (run_seq, hash) (decision 66). The engine
-- assigns seqs in discovery order and visits in about that order, so new rows are appended and
-- marking one done writes near the last ones; keyed by hash, both landed on random pages of the
-- run's largest table, in every batch. Dedup by URL is the engine's (its in-memory map of the
-- run's hashes, loaded from here on resume; one process holds a run at a time).
CREATE TABLE frontier_new (
  run_seq     INTEGER NOT NULL REFERENCES runs (seq) ON DELETE CASCADE,
  seq         INTEGER NOT NULL,
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
  PRIMARY KEY (run_seq, seq)
) WITHOUT ROWID;
-- Seqs were unique per run only by the engine's bookkeeping; two processes that both believed
-- they held a run could give one seq to two URLs. Numbering each run's rows afresh, in their
-- old order, keeps every row and that order.
INSERT INTO frontier_new (run_seq, seq, hash, url, host, depth, parent, kind, state, attempts, not_before, lease_until)
  SELECT run_seq, row_number() OVER (PARTITION BY run_seq ORDER BY seq, hash), hash, url, host, depth, parent, kind, state, attempts, not_before, lease_until
  FROM frontier;
DROP TABLE frontier;
ALTER TABLE frontier_new RENAME TO frontier;
CREATE INDEX frontier_todo ON frontier (run_seq, seq) WHERE state IN (0, 1);
