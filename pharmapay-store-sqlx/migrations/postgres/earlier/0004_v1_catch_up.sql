-- A database migrated by a build whose version 4 did not yet keep what the open invoices of
-- each due date still owe: the columns version 4 holds since. The figures in them are filled
-- by the recount the migrations end with.
ALTER TABLE invoice_open_counts ADD COLUMN pending_high BIGINT NOT NULL DEFAULT 0;
ALTER TABLE invoice_open_counts ADD COLUMN pending_low BIGINT NOT NULL DEFAULT 0;
