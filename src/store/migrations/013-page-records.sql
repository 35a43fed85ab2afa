-- The lean page record (decision 101). A visited page writes one `visits` row that also holds
-- what took 20-odd edge rows, an edge_parents row and four crawl log rows before:
--   children     the page's in-scope links, in the order found: their link hashes (32 hex
--                characters each) concatenated, no separator. The run's edges are these, read
--                in visit order; an edge's created_at is its parent's visited_at.
--   parent       the link hash of the page where this URL was found (null for seeds): the
--                parent_url_hash of its log entries.
--   logged       which of the page's successful log entries this row stands for, as bits:
--                1 fetch ok, 2 parse ok, 4 store ok, 8 discover ok. Every other entry (errors,
--                skips, retries, robots, schedule, extract, a parse of several pipelines) is
--                still a crawl_logs row. Rows from before this migration have 0: their entries
--                are all crawl_logs rows.
--   fetch_at     when the fetch answered (the fetch entry's occurred_at)
--   fetch_ms, parse_ms, store_ms   latency_ms of the fetch, parse and store entries
--   pipeline_id  the parse entry's pipeline
-- The parse entry occurred at fetch_at + parse_ms, the store entry at that + store_ms, the
-- discover entry at visited_at (rounded to the millisecond).
ALTER TABLE visits ADD COLUMN parent TEXT;
ALTER TABLE visits ADD COLUMN children TEXT;
ALTER TABLE visits ADD COLUMN logged INTEGER NOT NULL DEFAULT 0;
ALTER TABLE visits ADD COLUMN fetch_at INTEGER;
ALTER TABLE visits ADD COLUMN fetch_ms REAL;
ALTER TABLE visits ADD COLUMN parse_ms REAL;
ALTER TABLE visits ADD COLUMN store_ms REAL;
ALTER TABLE visits ADD COLUMN pipeline_id TEXT;

-- Edges recorded before: each parent's children, in the order they were recorded, onto the
-- parent's visit row.
UPDATE visits SET children = (
  SELECT group_concat(e.child, '' ORDER BY e.seq) FROM edges e WHERE e.run_seq = visits.run_seq AND e.parent = visits.hash
)
WHERE EXISTS (SELECT 1 FROM edge_parents p WHERE p.run_seq = visits.run_seq AND p.parent = visits.hash);

DROP TABLE edge_parents;
DROP TABLE edges;
