-- Many processes crawl one run together (decision 112). A run has workers instead of one holder,
-- and its host queues are leased: only a host's holder fetches its URLs, so per-host limits, the
-- delay and robots.txt hold for the whole cluster.

-- The processes crawling a run, each with its lease (renewed while it works). `seeding`: the
-- worker is still adding the run's first entries (its sitemaps), so the run is not over.
CREATE TABLE run_workers (
  run_seq     bigint  NOT NULL REFERENCES runs (seq) ON DELETE CASCADE,
  owner       text    NOT NULL,
  lease_until bigint  NOT NULL,
  seeding     boolean NOT NULL DEFAULT false,
  PRIMARY KEY (run_seq, owner)
);

-- A host queue's holder, its lease, the slots the per-host ceiling granted it, and when the host
-- may next be fetched (the delay its last holder left, kept across a hand-over).
ALTER TABLE run_hosts
  ADD COLUMN owner       text,
  ADD COLUMN lease_until bigint,
  ADD COLUMN slots       integer NOT NULL DEFAULT 0,
  ADD COLUMN next_at     bigint  NOT NULL DEFAULT 0;
-- The ceiling sums the slots held on one host across runs.
CREATE INDEX run_hosts_held ON run_hosts (host) WHERE owner IS NOT NULL;

-- The frontier is deduplicated by the database, not by one process's seen set: two processes may
-- discover one URL at once. Seqs come from one sequence, in the order rows are inserted.
CREATE UNIQUE INDEX frontier_by_hash ON frontier (run_seq, hash);
CREATE INDEX frontier_host_todo ON frontier (run_seq, host, seq) WHERE state IN (0, 1);
CREATE SEQUENCE frontier_seq;
ALTER TABLE frontier ALTER COLUMN seq SET DEFAULT nextval('frontier_seq');
-- Who took an in-flight row (state 1), so that a holder that dies leaves rows a successor can name.
ALTER TABLE frontier ADD COLUMN taken_by text;

-- A finished run has no workers and no host leases, whichever process or path finished it.
CREATE FUNCTION runs_finished_release() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM run_workers WHERE run_seq = NEW.seq;
  UPDATE run_hosts SET owner = NULL, lease_until = NULL, slots = 0 WHERE run_seq = NEW.seq AND owner IS NOT NULL;
  RETURN NULL;
END $$;
CREATE TRIGGER runs_finished_release AFTER UPDATE OF status ON runs
  FOR EACH ROW WHEN (NEW.status = 'finished' AND OLD.status <> 'finished')
  EXECUTE FUNCTION runs_finished_release();

-- Every process LISTENs on trawl_runs: a run created or moved (paused, resumed, stopped, finished)
-- reaches each at once instead of at its next poll.
CREATE FUNCTION runs_notify() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('trawl_runs', NEW.seq::text);
  RETURN NULL;
END $$;
CREATE TRIGGER runs_notify_insert AFTER INSERT ON runs FOR EACH ROW EXECUTE FUNCTION runs_notify();
CREATE TRIGGER runs_notify_status AFTER UPDATE OF status ON runs
  FOR EACH ROW WHEN (NEW.status IS DISTINCT FROM OLD.status)
  EXECUTE FUNCTION runs_notify();
