-- Runs whose bodies are still to be deleted from the blob store. A run's delete writes its row
-- in the transaction that deletes the run; the row goes once every body under the run's prefix
-- is gone. A process that dies in between leaves the row, and the next `trawl serve` finishes
-- the deletion, so no body outlives its run.
CREATE TABLE body_deletions (
  run_id       TEXT    PRIMARY KEY,
  requested_at INTEGER NOT NULL
) WITHOUT ROWID;
