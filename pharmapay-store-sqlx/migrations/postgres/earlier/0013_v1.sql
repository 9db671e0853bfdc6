-- pharmapay schema, version 13, for PostgreSQL: what each vendor's open invoices still owe,
-- kept beside its other figures (D41), so today's aging answers a page from a few rows (D43).
--
-- `owed` sums the positive pending amounts of the vendor's active invoices, so an overpaid
-- invoice takes nothing off it, unlike the balance (D11, D33); `open_invoices` counts them. The
-- store fills both from the rows right after this file runs (in the same transaction).
ALTER TABLE vendors ADD COLUMN open_invoices BIGINT NOT NULL DEFAULT 0;
ALTER TABLE vendors ADD COLUMN owed_high BIGINT NOT NULL DEFAULT 0;
ALTER TABLE vendors ADD COLUMN owed_low BIGINT NOT NULL DEFAULT 0;
-- Today's aging's order: most owed first, then name without case, then name in byte order,
-- then id.
CREATE INDEX vendors_by_owed ON vendors (owed_high DESC, owed_low DESC, name_key, name COLLATE "C", id)
    WHERE open_invoices > 0;
-- The open invoices of a page's vendors, by due date, with what they owe: the page's buckets.
CREATE INDEX invoices_open_by_vendor ON invoices (vendor_id, due_date) INCLUDE (amount, paid)
    WHERE is_active AND amount > paid;
