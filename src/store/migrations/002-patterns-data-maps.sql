-- Pattern sets and data maps: per-host definitions owned by one tenant. `seq` is the keyset
-- sort key (newest first in lists), `id` the public uuid, unique per tenant.
CREATE TABLE pattern_sets (
  seq        INTEGER PRIMARY KEY,
  tenant     TEXT    NOT NULL,
  id         TEXT    NOT NULL,
  host_seq   INTEGER NOT NULL REFERENCES hosts (seq),
  category   TEXT    NOT NULL,
  format     TEXT    NOT NULL,
  patterns   TEXT    NOT NULL,                 -- JSON array of the pattern strings
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  UNIQUE (tenant, id)
);
CREATE INDEX pattern_sets_by_tenant ON pattern_sets (tenant, seq);
CREATE INDEX pattern_sets_by_host ON pattern_sets (host_seq, seq);

CREATE TABLE data_maps (
  seq        INTEGER PRIMARY KEY,
  tenant     TEXT    NOT NULL,
  id         TEXT    NOT NULL,
  host_seq   INTEGER NOT NULL REFERENCES hosts (seq),
  schema_id  TEXT    NOT NULL,
  map        TEXT    NOT NULL,                 -- JSON: {fields:[Field], item_selector?}
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  UNIQUE (tenant, id)
);
CREATE INDEX data_maps_by_tenant ON data_maps (tenant, seq);
CREATE INDEX data_maps_by_host ON data_maps (host_seq, seq);
CREATE INDEX data_maps_by_schema ON data_maps (tenant, schema_id);
