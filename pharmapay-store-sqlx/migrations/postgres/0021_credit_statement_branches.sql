-- pharmapay schema, version 21, for PostgreSQL: every vendor credit and bank statement belongs
-- to a branch (D49).

-- The branch whose claim it is: it is set against that branch's bills only. Every credit kept
-- before branches existed is the head office's; the default fills them without rewriting the
-- table.
ALTER TABLE vendor_credits ADD COLUMN branch_id BIGINT NOT NULL DEFAULT 1 REFERENCES branches (id);

-- The branch whose account the statement is of: the head office's match every branch's
-- payments, another branch's only its own. Every statement kept so far is the head office's.
ALTER TABLE bank_statements ADD COLUMN branch_id BIGINT NOT NULL DEFAULT 1 REFERENCES branches (id);
