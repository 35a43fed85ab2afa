-- A parsed artifact of the crawl's default pipeline is not stored twice (decision 103): its row
-- names the page's raw body (blob_key is the raw artifact's) and the content is made again from
-- that body when read. source_url is where the body came from after redirects (the base its
-- links resolve against); null for an artifact whose blob is its own content.
ALTER TABLE artifacts ADD COLUMN source_url TEXT;
