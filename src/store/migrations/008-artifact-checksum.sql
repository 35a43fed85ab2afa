-- An artifact's content hash is now a checksum (XXH64 in 64 KiB blocks, `xxh64:<hex>`), not a
-- SHA-256 (decision 68). Rows stored before keep their bare SHA-256 hex.
ALTER TABLE artifacts RENAME COLUMN sha256 TO checksum;
