-- pharmapay schema, version 4, for PostgreSQL: figures kept beside the rows (D41) and indexed
-- search.
--
-- Kept figures are running totals that the store changes in the same transaction as every
-- write that moves them, by the change `pharmapay_core::figures` computes from the rows the
-- write touches; no trigger computes them, so the rule of what a row contributes lives once, in
-- core. Sums of money that can pass 64 bits (a vendor's invoices, a day's payments, the
-- installation's totals) are kept as exact pairs `<name>_high`, `<name>_low` of ten-thousandths,
-- value = high * 2^32 + low with 0 <= low < 2^32, which sort like the value itself. The store
-- fills every figure from the rows right after this file runs (in the same transaction), so an
-- existing database upgrades in place. Writers change figure rows in one order (vendors by id,
-- due dates, days, then the totals), after the payments and invoices they lock, so they never
-- wait on each other in a cycle.

-- Each vendor's figures over its active invoices (D11): how many, their amounts, and what they
-- still owe (amounts less paid totals), so reading a vendor or ranking vendors by balance reads
-- one row each.
ALTER TABLE vendors ADD COLUMN active_invoices BIGINT NOT NULL DEFAULT 0;
ALTER TABLE vendors ADD COLUMN invoiced_high BIGINT NOT NULL DEFAULT 0;
ALTER TABLE vendors ADD COLUMN invoiced_low BIGINT NOT NULL DEFAULT 0;
ALTER TABLE vendors ADD COLUMN outstanding_high BIGINT NOT NULL DEFAULT 0;
ALTER TABLE vendors ADD COLUMN outstanding_low BIGINT NOT NULL DEFAULT 0;
-- The vendor list sorted by balance, either way, with the id as tie-breaker (D8).
CREATE INDEX vendors_by_outstanding ON vendors (is_active, outstanding_high, outstanding_low, id);
-- The dashboard's top vendors: balance descending, then name, then id (D12).
CREATE INDEX vendors_ranked ON vendors (is_active, outstanding_high DESC, outstanding_low DESC, name_key, id);

-- Active payments per business day (YYYYMMDD in the TimeZone setting's zone, D3): the
-- dashboard's twelve months read at most 366 rows and its recent payments 30. A change of the
-- TimeZone setting recounts them in the same transaction; payment writes read the setting
-- FOR SHARE first, so they never file a payment under a zone being replaced.
CREATE TABLE payment_days (
    day BIGINT PRIMARY KEY,
    payments BIGINT NOT NULL,
    amount_high BIGINT NOT NULL,
    amount_low BIGINT NOT NULL
);

-- The installation's totals, one row: what the dashboard's summary shows and the totals of the
-- unfiltered lists.
CREATE TABLE ledger_totals (
    id BIGINT PRIMARY KEY CHECK (id = 1),
    vendors BIGINT NOT NULL,
    active_vendors BIGINT NOT NULL,
    invoices BIGINT NOT NULL,
    active_invoices BIGINT NOT NULL,
    -- Active invoices still owing something (amount above paid): Overdue or PartiallyPaid.
    open_invoices BIGINT NOT NULL,
    invoiced_high BIGINT NOT NULL,
    invoiced_low BIGINT NOT NULL,
    invoice_paid_high BIGINT NOT NULL,
    invoice_paid_low BIGINT NOT NULL,
    payments BIGINT NOT NULL,
    active_payments BIGINT NOT NULL,
    paid_out_high BIGINT NOT NULL,
    paid_out_low BIGINT NOT NULL
);
INSERT INTO ledger_totals VALUES (1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0);

-- The open counts per due date of version 2 are kept by the store from now on, like every
-- other figure.
DROP TRIGGER invoices_open_on_insert ON invoices;
DROP TRIGGER invoices_open_on_update ON invoices;
DROP TRIGGER invoices_open_on_delete ON invoices;
DROP FUNCTION invoice_open_counts_follow();

-- Search (case-insensitive substring, on the lower-cased keys) uses trigram indexes from the
-- pg_trgm extension, which a database owner may create (it is a trusted extension). A search
-- of three characters or more looks its trigrams up; shorter ones cannot, and scan.
CREATE EXTENSION IF NOT EXISTS pg_trgm;
CREATE INDEX invoices_number_trigrams ON invoices USING gin (number_key gin_trgm_ops);
CREATE INDEX vendors_name_trigrams ON vendors USING gin (name_key gin_trgm_ops);
