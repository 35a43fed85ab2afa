-- Hosts, links, jobs and runs. Every row belongs to one tenant; `seq` is the keyset sort key
-- (insertion order), `id`/`hash` the public identifier, unique per tenant.
CREATE TABLE hosts (
  seq        INTEGER PRIMARY KEY,
  tenant     TEXT    NOT NULL,
  hash       TEXT    NOT NULL,
  domain     TEXT    NOT NULL,
  labels     TEXT    NOT NULL DEFAULT '{}',
  created_at INTEGER NOT NULL,
  UNIQUE (tenant, hash)
);
CREATE INDEX hosts_by_tenant ON hosts (tenant, seq);
CREATE INDEX hosts_by_domain ON hosts (tenant, domain);

CREATE TABLE links (
  seq        INTEGER PRIMARY KEY,
  tenant     TEXT    NOT NULL,
  hash       TEXT    NOT NULL,
  url        TEXT    NOT NULL,
  host_seq   INTEGER NOT NULL REFERENCES hosts (seq),
  labels     TEXT    NOT NULL DEFAULT '{}',
  created_at INTEGER NOT NULL,
  UNIQUE (tenant, hash)
);
CREATE INDEX links_by_tenant ON links (tenant, seq);
CREATE INDEX links_by_host ON links (host_seq, seq);

-- One row per label of a host, link, job or run, so a label filter walks an index in keyset
-- order instead of scanning JSON. `kind`: 1 host, 2 link, 3 job, 4 run.
CREATE TABLE labels (
  kind   INTEGER NOT NULL,
  tenant TEXT    NOT NULL,
  key    TEXT    NOT NULL,
  value  TEXT    NOT NULL,
  ref    INTEGER NOT NULL,
  PRIMARY KEY (kind, tenant, key, value, ref)
) WITHOUT ROWID;
CREATE INDEX labels_by_ref ON labels (kind, ref);

CREATE TABLE jobs (
  seq        INTEGER PRIMARY KEY,
  tenant     TEXT    NOT NULL,
  id         TEXT    NOT NULL,
  name       TEXT    NOT NULL,
  config     TEXT    NOT NULL,
  labels     TEXT    NOT NULL DEFAULT '{}',
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  UNIQUE (tenant, id)
);
CREATE INDEX jobs_by_tenant ON jobs (tenant, seq);
CREATE INDEX jobs_by_name ON jobs (tenant, name);

CREATE TABLE runs (
  seq         INTEGER PRIMARY KEY,
  tenant      TEXT    NOT NULL,
  id          TEXT    NOT NULL,
  job_seq     INTEGER NOT NULL REFERENCES jobs (seq) ON DELETE CASCADE,
  job_id      TEXT    NOT NULL,
  status      TEXT    NOT NULL CHECK (status IN ('pending', 'running', 'paused', 'finished')),
  stop_reason TEXT,
  labels      TEXT    NOT NULL DEFAULT '{}',
  config      TEXT    NOT NULL,
  created_at  INTEGER NOT NULL,
  started_at  INTEGER,
  finished_at INTEGER,
  paused_at   INTEGER,                     -- when the current pause began
  paused_ms   INTEGER NOT NULL DEFAULT 0,  -- paused time before it, excluded from max_age
  queued      INTEGER NOT NULL DEFAULT 0,
  visited     INTEGER NOT NULL DEFAULT 0,
  failed      INTEGER NOT NULL DEFAULT 0,
  bytes       INTEGER NOT NULL DEFAULT 0,
  UNIQUE (tenant, id)
);
CREATE INDEX runs_by_tenant ON runs (tenant, seq);
CREATE INDEX runs_by_job ON runs (job_seq, seq);
CREATE INDEX runs_by_status ON runs (status, seq);
