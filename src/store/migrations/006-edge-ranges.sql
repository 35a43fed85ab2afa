-- Edges without their (run_seq, parent, child) index (decision 65). That index put a page's
-- twenty-odd children at a random place of a large index, and maintaining it was about a
-- quarter of what recording a crawl cost in SQLite. A page's children are recorded in one
-- statement, so they hold consecutive seqs: one row per parent and run names that range.
-- Edges from before this migration need not be consecutive (a parent could be recorded twice),
-- so the range is min..max and readers also match edges.parent.
CREATE TABLE edge_parents (
  run_seq   INTEGER NOT NULL REFERENCES runs (seq) ON DELETE CASCADE,
  parent    TEXT    NOT NULL,  -- links.hash
  first_seq INTEGER NOT NULL,  -- edges.seq of its first child
  last_seq  INTEGER NOT NULL,
  PRIMARY KEY (run_seq, parent)
) WITHOUT ROWID;
INSERT INTO edge_parents (run_seq, parent, first_seq, last_seq)
  SELECT run_seq, parent, min(seq), max(seq) FROM edges GROUP BY run_seq, parent;

CREATE TABLE edges_new (
  seq         INTEGER PRIMARY KEY,
  run_seq     INTEGER NOT NULL REFERENCES runs (seq) ON DELETE CASCADE,
  parent      TEXT    NOT NULL,  -- links.hash
  child       TEXT    NOT NULL,  -- links.hash
  created_at  INTEGER NOT NULL
);
INSERT INTO edges_new (seq, run_seq, parent, child, created_at) SELECT seq, run_seq, parent, child, created_at FROM edges;
DROP TABLE edges;
ALTER TABLE edges_new RENAME TO edges;
CREATE INDEX edges_by_run ON edges (run_seq, seq);
