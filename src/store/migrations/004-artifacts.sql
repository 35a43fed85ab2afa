-- Artifacts: what a run stored per URL (SPEC Artifact). The bytes live in the blob store under
-- blob_key; this row is the catalogue. Rows outlive their run's deletion only until the run's
-- delete removes them with their blobs (SQL cannot delete blobs).
CREATE TABLE artifacts (
  seq          INTEGER PRIMARY KEY,
  tenant       TEXT    NOT NULL,
  id           TEXT    NOT NULL,
  run_id       TEXT    NOT NULL,
  url_hash     TEXT    NOT NULL,
  blob_key     TEXT    NOT NULL,
  kind         TEXT    NOT NULL CHECK (kind IN ('raw', 'parsed', 'asset')),
  pipeline_id  TEXT,
  content_type TEXT    NOT NULL,
  size         INTEGER NOT NULL,
  sha256       TEXT    NOT NULL,
  created_at   INTEGER NOT NULL,
  UNIQUE (tenant, id)
);
CREATE INDEX artifacts_by_tenant ON artifacts (tenant, seq);
CREATE INDEX artifacts_by_run ON artifacts (tenant, run_id, seq);
CREATE INDEX artifacts_by_url ON artifacts (tenant, url_hash, seq);
-- `blob_keys` filters look keys up here, and deletes ask whether another row (of any tenant)
-- still points at a blob before they remove it: keys are not tenant-scoped (design.md §3).
CREATE INDEX artifacts_by_blob ON artifacts (blob_key, tenant);
