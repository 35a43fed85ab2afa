-- The payment ledger of the scrape API (docs/payments.md, design.md §7): every accepted x402
-- authorization, kept with the signed payload so that it can be settled later. The unique key
-- is the replay guard: EIP-3009's nonce space, chainId:asset:checksummed(from):lower(nonce).
-- An insert that finds the key taken is a replay. The signature is left out of the key
-- because signatures are malleable.
CREATE TABLE payments (
  seq          INTEGER PRIMARY KEY,
  key          TEXT    NOT NULL UNIQUE,
  payer        TEXT    NOT NULL,            -- checksummed `from`
  amount       TEXT    NOT NULL,            -- the authorized value, USDC atomic units (uint256 as text)
  network      TEXT    NOT NULL,            -- v1 name: base-sepolia, base
  version      INTEGER NOT NULL CHECK (version IN (1, 2)),
  status       TEXT    NOT NULL CHECK (status IN ('accepted', 'served', 'handler_failed', 'settled', 'settle_failed')),
  payload      TEXT    NOT NULL,            -- the decoded PaymentPayload, JSON, as the client sent it
  requirements TEXT    NOT NULL,            -- the PaymentRequirements it was checked against, JSON (a facilitator's settle needs both)
  valid_before INTEGER NOT NULL,            -- unix seconds (capped at 2^53): settle before this
  resource     TEXT    NOT NULL,
  settle_tx    TEXT,
  settle_error TEXT,
  created_at   INTEGER NOT NULL,
  updated_at   INTEGER NOT NULL
);
CREATE INDEX payments_by_status ON payments (status, seq);
