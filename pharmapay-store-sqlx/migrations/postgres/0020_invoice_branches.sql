-- pharmapay schema, version 20, for PostgreSQL: every invoice belongs to a branch (D49).

-- The branch whose bill it is; its payments belong to it through the invoice, so moving the
-- invoice moves them. Every invoice kept before branches existed is the head office's; the
-- default fills them without rewriting the table.
ALTER TABLE invoices ADD COLUMN branch_id BIGINT NOT NULL DEFAULT 1 REFERENCES branches (id);
