-- Webhooks (docs/webhooks.md, decision 116): a URL, a secret and the events wanted, for one job
-- or (job_seq NULL) for every job of the tenant. A job's webhooks go with it.
CREATE TABLE webhooks (
  seq         INTEGER PRIMARY KEY,
  tenant      TEXT    NOT NULL,
  id          TEXT    NOT NULL,
  job_seq     INTEGER REFERENCES jobs (seq) ON DELETE CASCADE,
  job_id      TEXT,
  url         TEXT    NOT NULL,
  secret      TEXT    NOT NULL,           -- whsec_ + base64 of the key
  events      TEXT    NOT NULL,           -- JSON array of event names
  enabled     INTEGER NOT NULL DEFAULT 1,
  description TEXT,
  created_at  INTEGER NOT NULL,
  updated_at  INTEGER NOT NULL,
  UNIQUE (tenant, id)
);
CREATE INDEX webhooks_by_tenant ON webhooks (tenant, seq);
CREATE INDEX webhooks_by_job ON webhooks (job_seq, seq);

-- The outbox: one row per event per webhook, written by the triggers below in the transaction
-- that moved the run, delivered after. The id is the webhook-id header, the same on every retry.
-- The payload is the exact bytes sent, so it outlives the run it describes.
CREATE TABLE webhook_deliveries (
  seq          INTEGER PRIMARY KEY,
  tenant       TEXT    NOT NULL,
  id           TEXT    NOT NULL,
  webhook_seq  INTEGER NOT NULL REFERENCES webhooks (seq) ON DELETE CASCADE,
  event        TEXT    NOT NULL,
  payload      TEXT    NOT NULL,
  status       TEXT    NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'delivered', 'failed')),
  attempts     INTEGER NOT NULL DEFAULT 0,
  next_at      INTEGER,                    -- pending: when the next attempt is due
  lease_owner  TEXT,                       -- the process sending it now, until lease_until
  lease_until  INTEGER,
  created_at   INTEGER NOT NULL,
  delivered_at INTEGER,
  UNIQUE (tenant, id)
);
CREATE INDEX webhook_deliveries_by_webhook ON webhook_deliveries (webhook_seq, seq);
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_at) WHERE status = 'pending';

CREATE TABLE webhook_attempts (
  seq          INTEGER PRIMARY KEY,
  delivery_seq INTEGER NOT NULL REFERENCES webhook_deliveries (seq) ON DELETE CASCADE,
  at           INTEGER NOT NULL,
  duration_ms  INTEGER NOT NULL,
  status_code  INTEGER,                    -- null when no response came
  error        TEXT                        -- null on a 2xx
);
CREATE INDEX webhook_attempts_by_delivery ON webhook_attempts (delivery_seq, seq);

-- Every path that moves a run (the API's pause, resume and stop, the engine's start and finish)
-- is an UPDATE of runs.status; recording the deliveries here, in that statement's transaction,
-- misses none and records none for a move that was rolled back. The payload is built here, with
-- timestamps as src/store/time.ts writes them, the same bytes as the PostgreSQL engine's.
CREATE TRIGGER runs_webhooks AFTER UPDATE OF status ON runs
WHEN NEW.status <> OLD.status AND NEW.status IN ('running', 'paused', 'finished')
  AND EXISTS (SELECT 1 FROM webhooks w WHERE w.tenant = NEW.tenant AND w.enabled = 1)
BEGIN
  INSERT INTO webhook_deliveries (tenant, id, webhook_seq, event, payload, next_at, created_at)
    SELECT w.tenant, 'msg_' || lower(hex(randomblob(16))), w.seq, e.event,
      json_object(
        'type', e.event,
        'timestamp', strftime('%Y-%m-%dT%H:%M:%S', e.at / 1000, 'unixepoch') || printf('.%03dZ', e.at % 1000),
        'data', CASE WHEN e.event = 'run.finished' THEN json_insert(e.data, '$.error_counts', json(NEW.error_counts)) ELSE json(e.data) END
      ),
      e.now, e.now
    FROM (
      SELECT ev.event, ev.now, coalesce(CASE ev.event WHEN 'run.started' THEN NEW.started_at WHEN 'run.paused' THEN NEW.paused_at WHEN 'run.finished' THEN NEW.finished_at END, ev.now) AS at,
        json_object('run_id', NEW.id, 'job_id', NEW.job_id, 'status', NEW.status, 'stop_reason', NEW.stop_reason, 'outcome', NEW.outcome,
          'stats', json_object('queued', NEW.queued, 'visited', NEW.visited, 'failed', NEW.failed, 'bytes', NEW.bytes)) AS data
      FROM (SELECT CASE
          WHEN NEW.status = 'finished' THEN 'run.finished'
          WHEN NEW.status = 'paused' THEN 'run.paused'
          WHEN OLD.status = 'pending' THEN 'run.started'
          WHEN OLD.status = 'paused' THEN 'run.resumed'
        END AS event, CAST(round(unixepoch('subsec') * 1000) AS INTEGER) AS now) ev
      WHERE ev.event IS NOT NULL
    ) e
    JOIN webhooks w ON w.tenant = NEW.tenant AND w.enabled = 1 AND (w.job_seq IS NULL OR w.job_seq = NEW.job_seq)
    WHERE EXISTS (SELECT 1 FROM json_each(w.events) WHERE value = e.event);
END;

-- A trigger's firing, whether it created a run or was skipped.
CREATE TRIGGER trigger_executions_webhooks AFTER INSERT ON trigger_executions
WHEN EXISTS (SELECT 1 FROM webhooks w WHERE w.tenant = NEW.tenant AND w.enabled = 1)
BEGIN
  INSERT INTO webhook_deliveries (tenant, id, webhook_seq, event, payload, next_at, created_at)
    SELECT w.tenant, 'msg_' || lower(hex(randomblob(16))), w.seq, 'trigger.fired',
      json_object(
        'type', 'trigger.fired',
        'timestamp', strftime('%Y-%m-%dT%H:%M:%S', NEW.executed_at / 1000, 'unixepoch') || printf('.%03dZ', NEW.executed_at % 1000),
        'data', json_object('trigger_id', NEW.trigger_id, 'job_id', t.job_id, 'execution_id', NEW.id, 'run_id', NEW.run_id, 'outcome', NEW.outcome,
          'scheduled_at', strftime('%Y-%m-%dT%H:%M:%S', NEW.scheduled_at / 1000, 'unixepoch') || printf('.%03dZ', NEW.scheduled_at % 1000))
      ),
      n.now, n.now
    FROM triggers t
    CROSS JOIN (SELECT CAST(round(unixepoch('subsec') * 1000) AS INTEGER) AS now) n
    JOIN webhooks w ON w.tenant = NEW.tenant AND w.enabled = 1 AND (w.job_seq IS NULL OR w.job_seq = t.job_seq)
    WHERE t.seq = NEW.trigger_seq AND EXISTS (SELECT 1 FROM json_each(w.events) WHERE value = 'trigger.fired');
END;
