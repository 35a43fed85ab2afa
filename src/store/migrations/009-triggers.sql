-- Triggers of a job (SPEC Triggers, design.md §5): a cron schedule or "after each finished run".
-- They go with their job (ON DELETE CASCADE), and their executions and pending firings with them.
CREATE TABLE triggers (
  seq              INTEGER PRIMARY KEY,
  tenant           TEXT    NOT NULL,
  id               TEXT    NOT NULL,
  job_seq          INTEGER NOT NULL REFERENCES jobs (seq) ON DELETE CASCADE,
  job_id           TEXT    NOT NULL,
  name             TEXT    NOT NULL,
  kind             TEXT    NOT NULL CHECK (kind IN ('schedule', 'on_finish')),
  params           TEXT    NOT NULL,            -- JSON, as given (after validation)
  delay_ms         INTEGER NOT NULL DEFAULT 0,  -- on_finish: params.delay in ms
  enabled          INTEGER NOT NULL DEFAULT 1,
  created_at       INTEGER NOT NULL,
  last_executed_at INTEGER,
  -- schedule: the next tick not yet handled (epoch ms); null while disabled or when the
  -- expression has no tick left. A past value after a restart is the ticks missed meanwhile:
  -- they fire once.
  next_at          INTEGER,
  UNIQUE (tenant, id)
);
CREATE INDEX triggers_by_tenant ON triggers (tenant, seq);
CREATE INDEX triggers_by_job ON triggers (job_seq, seq);
CREATE INDEX triggers_by_name ON triggers (tenant, name);
CREATE INDEX triggers_due ON triggers (next_at) WHERE next_at IS NOT NULL;

-- What each firing did: `created_run` with its run, or `skipped` (the job had an unfinished run).
-- run_id is kept as text: the run may be deleted later, the record stays.
CREATE TABLE trigger_executions (
  seq          INTEGER PRIMARY KEY,
  tenant       TEXT    NOT NULL,
  id           TEXT    NOT NULL,
  trigger_seq  INTEGER NOT NULL REFERENCES triggers (seq) ON DELETE CASCADE,
  trigger_id   TEXT    NOT NULL,
  run_id       TEXT,
  outcome      TEXT    NOT NULL CHECK (outcome IN ('created_run', 'skipped')),
  scheduled_at INTEGER NOT NULL,
  executed_at  INTEGER NOT NULL,
  created_at   INTEGER NOT NULL,
  UNIQUE (tenant, id)
);
CREATE INDEX trigger_executions_by_trigger ON trigger_executions (trigger_seq, seq);

-- on_finish firings not yet made, in the database so that one falling due while the process is
-- down fires after the restart. Keyed by their own seq, not (trigger, run): runs.seq can be
-- reused once the last run is deleted, and a firing of the new run must not be taken for the
-- old one's. The trigger below records one per finish.
CREATE TABLE trigger_firings (
  seq         INTEGER PRIMARY KEY,
  trigger_seq INTEGER NOT NULL REFERENCES triggers (seq) ON DELETE CASCADE,
  run_seq     INTEGER NOT NULL,  -- the finished run (no reference: deleting it cancels nothing)
  due_at      INTEGER NOT NULL
);
CREATE INDEX trigger_firings_due ON trigger_firings (due_at);
CREATE INDEX trigger_firings_by_trigger ON trigger_firings (trigger_seq);

-- "Does the job have an unfinished run?" at every firing: the few unfinished runs, not all of a
-- job's runs (an on_finish loop adds one per round).
CREATE INDEX runs_unfinished ON runs (job_seq) WHERE status <> 'finished';

-- A run finishes in several places (the engine's end, the stop route, a run that cannot be
-- resumed); recording the firings here, in the same transaction as the finish, misses none of
-- them and cannot record one for a finish that was rolled back.
CREATE TRIGGER runs_finished_fire AFTER UPDATE OF status ON runs
WHEN NEW.status = 'finished' AND OLD.status <> 'finished'
BEGIN
  INSERT INTO trigger_firings (trigger_seq, run_seq, due_at)
    SELECT t.seq, NEW.seq, coalesce(NEW.finished_at, 0) + t.delay_ms
    FROM triggers t
    WHERE t.job_seq = NEW.job_seq AND t.kind = 'on_finish' AND t.enabled = 1;
END;
