-- pharmapay schema, version 16, for SQLite: vendor credits set against bills (D44), and the
-- figures they move (D41).

-- One application of a credit to an invoice: the credit's `applied` and the invoice's
-- `credited` are the exact sums of their active applications, changed in the same transaction
-- as each of them.
CREATE TABLE credit_applications (
    id INTEGER PRIMARY KEY,
    credit_id INTEGER NOT NULL REFERENCES vendor_credits (id),
    invoice_id INTEGER NOT NULL REFERENCES invoices (id),
    amount INTEGER NOT NULL CHECK (amount > 0),
    date INTEGER NOT NULL,
    is_active INTEGER NOT NULL DEFAULT 1 CHECK (is_active IN (0, 1)),
    created_at INTEGER NOT NULL
) STRICT;
CREATE INDEX credit_applications_by_credit ON credit_applications (credit_id) WHERE is_active;
CREATE INDEX credit_applications_by_invoice ON credit_applications (invoice_id) WHERE is_active;
-- An aging of an earlier day adds back what was applied after it.
CREATE INDEX credit_applications_by_date ON credit_applications (date, invoice_id, amount) WHERE is_active;

-- What credits applied to an invoice: its pending amount is `amount - paid - credited` (D10).
ALTER TABLE invoices ADD COLUMN credited INTEGER NOT NULL DEFAULT 0;
DROP INDEX invoices_by_pending;
CREATE INDEX invoices_by_pending ON invoices ((amount - paid - credited), id);
DROP INDEX invoices_open_by_vendor;
CREATE INDEX invoices_open_by_vendor ON invoices (vendor_id, due_date, amount, paid, credited, is_active)
    WHERE is_active AND amount > paid + credited;

-- Each vendor's credited total over its active invoices and what its active credits still
-- have available; its statement's credit lines per day; the installation's totals of both and
-- of the claims still undecided. Exact (high, low) pairs, as the other kept sums.
ALTER TABLE vendors ADD COLUMN credited_high INTEGER NOT NULL DEFAULT 0;
ALTER TABLE vendors ADD COLUMN credited_low INTEGER NOT NULL DEFAULT 0;
ALTER TABLE vendors ADD COLUMN available_credit_high INTEGER NOT NULL DEFAULT 0;
ALTER TABLE vendors ADD COLUMN available_credit_low INTEGER NOT NULL DEFAULT 0;
ALTER TABLE vendor_days ADD COLUMN credits INTEGER NOT NULL DEFAULT 0;
ALTER TABLE vendor_days ADD COLUMN credited_high INTEGER NOT NULL DEFAULT 0;
ALTER TABLE vendor_days ADD COLUMN credited_low INTEGER NOT NULL DEFAULT 0;
ALTER TABLE ledger_totals ADD COLUMN invoice_credited_high INTEGER NOT NULL DEFAULT 0;
ALTER TABLE ledger_totals ADD COLUMN invoice_credited_low INTEGER NOT NULL DEFAULT 0;
ALTER TABLE ledger_totals ADD COLUMN credits_available INTEGER NOT NULL DEFAULT 0;
ALTER TABLE ledger_totals ADD COLUMN available_credit_high INTEGER NOT NULL DEFAULT 0;
ALTER TABLE ledger_totals ADD COLUMN available_credit_low INTEGER NOT NULL DEFAULT 0;
ALTER TABLE ledger_totals ADD COLUMN pending_claims INTEGER NOT NULL DEFAULT 0;
ALTER TABLE ledger_totals ADD COLUMN pending_claimed_high INTEGER NOT NULL DEFAULT 0;
ALTER TABLE ledger_totals ADD COLUMN pending_claimed_low INTEGER NOT NULL DEFAULT 0;
-- A vendor's credits decided on a day, for the recount of its statement lines.
CREATE INDEX vendor_credits_by_vendor ON vendor_credits (vendor_id, decision_date) WHERE is_active;
