-- pharmapay schema, version 20, for SQLite: every invoice belongs to a branch (D49).

-- The branch whose bill it is; its payments belong to it through the invoice, so moving the
-- invoice moves them. Every invoice kept before branches existed is the head office's. The
-- store checks the branch is active in the write's transaction; SQLite adds no reference here,
-- as it allows none on an added column with a default while foreign keys are on.
ALTER TABLE invoices ADD COLUMN branch_id INTEGER NOT NULL DEFAULT 1;
