-- pharmapay schema, version 21, for SQLite: every vendor credit and bank statement belongs to a
-- branch (D49).

-- The branch whose claim it is: it is set against that branch's bills only. Every credit kept
-- before branches existed is the head office's. As for invoices, the store checks the branch is
-- active in the write's transaction: SQLite allows no reference on an added column with a
-- default while foreign keys are on.
ALTER TABLE vendor_credits ADD COLUMN branch_id INTEGER NOT NULL DEFAULT 1;

-- The branch whose account the statement is of: the head office's match every branch's
-- payments, another branch's only its own. Every statement kept so far is the head office's.
ALTER TABLE bank_statements ADD COLUMN branch_id INTEGER NOT NULL DEFAULT 1;
