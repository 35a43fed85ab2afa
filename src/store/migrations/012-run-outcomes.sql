-- How a finished run ended, in words a person reads (docs/crawl.md, "Outcomes"), beside SPEC's
-- stop_reason, and how many of its URLs failed for each reason: a JSON object, reason → count,
-- kept by the engine with the run's counters.
ALTER TABLE runs ADD COLUMN outcome TEXT;
ALTER TABLE runs ADD COLUMN error_counts TEXT NOT NULL DEFAULT '{}';

-- Runs crawled before this migration: their counts from the crawl log (one per URL and reason;
-- the URLs a stalled run left queued were never logged, so they are not among them) ...
UPDATE runs SET error_counts = coalesce((
  SELECT json_group_object(reason, n) FROM (
    SELECT CASE WHEN error_reason = 'http_status' AND http_status IS NOT NULL THEN 'http_' || http_status ELSE error_reason END AS reason,
           count(DISTINCT url_hash) AS n
    FROM crawl_logs
    WHERE run_seq = runs.seq AND step = 'fetch' AND status = 'error' AND error_reason IS NOT NULL AND error_reason <> 'interrupted'
    GROUP BY 1 ORDER BY n DESC, reason
  )
), '{}');

-- ... and the outcome of the finished ones, as far as their rows tell it: a run that ended with
-- max_empty_evaluations then could have been complete or stalled, and is taken as complete.
UPDATE runs SET outcome = CASE
    WHEN stop_reason = 'manual' THEN 'stopped'
    WHEN stop_reason IN ('unknown', 'empty_seed') THEN 'failed'
    WHEN NOT EXISTS (SELECT 1 FROM visits v WHERE v.run_seq = runs.seq AND v.status < 400) THEN 'failed'
    WHEN stop_reason IN ('max_urls', 'max_age', 'max_depth') THEN 'limited'
    ELSE 'complete'
  END
WHERE status = 'finished';
