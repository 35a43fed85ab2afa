-- An on_finish trigger may name the stop reasons and outcomes it fires for (decision 117):
-- `params.stop_reasons` and `params.outcomes`, JSON arrays in the params the trigger keeps. A
-- trigger without them fires for every finish, as before. The filter is read here, in the
-- statement that finishes the run, so every path that finishes a run honours it.
DROP TRIGGER runs_finished_fire;
CREATE TRIGGER runs_finished_fire AFTER UPDATE OF status ON runs
WHEN NEW.status = 'finished' AND OLD.status <> 'finished'
BEGIN
  INSERT INTO trigger_firings (trigger_seq, run_seq, due_at)
    SELECT t.seq, NEW.seq, coalesce(NEW.finished_at, 0) + t.delay_ms
    FROM triggers t
    WHERE t.job_seq = NEW.job_seq AND t.kind = 'on_finish' AND t.enabled = 1
      AND (json_type(t.params, '$.stop_reasons') IS NULL
           OR EXISTS (SELECT 1 FROM json_each(t.params, '$.stop_reasons') r WHERE r.value = NEW.stop_reason))
      AND (json_type(t.params, '$.outcomes') IS NULL
           OR EXISTS (SELECT 1 FROM json_each(t.params, '$.outcomes') o WHERE o.value = NEW.outcome));
END;
