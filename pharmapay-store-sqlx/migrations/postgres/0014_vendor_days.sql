-- pharmapay schema, version 14, for PostgreSQL: each vendor's statement lines per business
-- day, kept beside the rows (D41), so a page of a statement reads a few days' lines (D43).
--
-- A row holds a vendor's active invoices dated that day (YYYYMMDD in the TimeZone setting's
-- zone, D3) and the active payments of its active invoices dated that day, how many and what
-- they add up to. The store fills them from the rows right after this file runs, and a change
-- of the TimeZone setting recounts them.
CREATE TABLE vendor_days (
    vendor_id BIGINT NOT NULL,
    day BIGINT NOT NULL,
    invoices BIGINT NOT NULL,
    invoiced_high BIGINT NOT NULL,
    invoiced_low BIGINT NOT NULL,
    payments BIGINT NOT NULL,
    paid_high BIGINT NOT NULL,
    paid_low BIGINT NOT NULL,
    PRIMARY KEY (vendor_id, day)
);
-- A payment names its invoice's vendor too, kept by the store when the invoice moves, so a
-- statement reads a day's payments of one vendor along an index.
ALTER TABLE transactions ADD COLUMN vendor_id BIGINT NOT NULL DEFAULT 0;
UPDATE transactions t SET vendor_id = i.vendor_id FROM invoices i WHERE i.id = t.invoice_id;
-- The indexes a statement page reads its days' lines along.
CREATE INDEX transactions_by_vendor_date ON transactions (vendor_id, transaction_date);
CREATE INDEX invoices_by_vendor_date ON invoices (vendor_id, invoice_date);
