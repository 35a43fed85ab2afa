-- A visit's and an artifact's lookup by URL go through the catalogue link's seq instead of its
-- hash (decision 104). A hash is random, so every page a commit recorded put its entry on a
-- leaf of its own in visits_once and artifacts_by_url: two thirds of a commit's WAL frames on
-- the benchmark site. Links are catalogued in the order a crawl finds them and visited in much
-- the same order, so entries keyed by link seq land on the same few leaves. Links are never
-- deleted, so a (tenant, hash) names one seq for good.
ALTER TABLE visits ADD COLUMN link_seq INTEGER;
UPDATE visits SET link_seq = (SELECT l.seq FROM runs r JOIN links l ON l.tenant = r.tenant AND l.hash = visits.hash WHERE r.seq = visits.run_seq);
DROP INDEX visits_once;
CREATE UNIQUE INDEX visits_once ON visits (run_seq, link_seq);

ALTER TABLE artifacts ADD COLUMN link_seq INTEGER;
UPDATE artifacts SET link_seq = (SELECT l.seq FROM links l WHERE l.tenant = artifacts.tenant AND l.hash = artifacts.url_hash);
DROP INDEX artifacts_by_url;
CREATE INDEX artifacts_by_link ON artifacts (link_seq, seq);
