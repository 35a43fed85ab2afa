-- An on_finish trigger may name the stop reasons and outcomes it fires for (decision 117):
-- `params.stop_reasons` and `params.outcomes`, JSON arrays in the params the trigger keeps. A
-- trigger without them fires for every finish, as before. The filter is read here, in the
-- statement that finishes the run, so every path and every process that finishes a run honours it.
CREATE OR REPLACE FUNCTION runs_finished_fire() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO trigger_firings (trigger_seq, run_seq, due_at)
    SELECT t.seq, NEW.seq, coalesce(NEW.finished_at, 0) + t.delay_ms
    FROM triggers t
    WHERE t.job_seq = NEW.job_seq AND t.kind = 'on_finish' AND t.enabled = 1
      AND (NOT (t.params::jsonb ? 'stop_reasons') OR (t.params::jsonb -> 'stop_reasons') ? NEW.stop_reason)
      AND (NOT (t.params::jsonb ? 'outcomes') OR (t.params::jsonb -> 'outcomes') ? NEW.outcome);
  RETURN NULL;
END $$;
