-- pharmapay schema, version 5, for SQLite: payment references (D30) and vendor payments over
-- several invoices (D31).

-- A vendor payment: one transfer or cheque to a vendor, kept with the amount, date, type,
-- reference and description it was recorded with. Its parts are payment transactions, one per
-- invoice, that name it; it has no state of its own: it is there while a part is active.
CREATE TABLE vendor_payments (
    id INTEGER PRIMARY KEY,
    vendor_id INTEGER NOT NULL REFERENCES vendors (id),
    amount INTEGER NOT NULL CHECK (amount > 0),
    transaction_date INTEGER NOT NULL,
    transaction_type TEXT NOT NULL CHECK (transaction_type IN ('Cash', 'UPI', 'NetBanking')),
    reference TEXT,
    description TEXT,
    created_at INTEGER NOT NULL
) STRICT;

-- A payment's reference as typed (trimmed) and its key (upper-cased, without spaces, hyphens
-- and slashes), computed in Rust by `PaymentReference`. Among active payments, one key per
-- payment type belongs to one payment or one vendor payment: the store checks it under the
-- write lock before every write that makes a reference active (D30).
ALTER TABLE transactions ADD COLUMN reference TEXT;
ALTER TABLE transactions ADD COLUMN reference_key TEXT;
ALTER TABLE transactions ADD COLUMN vendor_payment_id INTEGER REFERENCES vendor_payments (id);

-- The reference check and the list's `reference` filter.
CREATE INDEX transactions_by_reference ON transactions (reference_key) WHERE reference_key IS NOT NULL;
-- A vendor payment's parts.
CREATE INDEX transactions_by_vendor_payment ON transactions (vendor_payment_id) WHERE vendor_payment_id IS NOT NULL;
