-- pharmapay schema, version 17, for SQLite: bank statements matched against the payments
-- recorded (D46).

-- An uploaded statement of one account, with its kept lines counted by status: the counts
-- change in the transaction of every line action, so a list of statements never counts lines.
-- Days are `YYYY-MM-DD` text, which sorts as the days do.
CREATE TABLE bank_statements (
    id INTEGER PRIMARY KEY,
    account TEXT NOT NULL,
    from_date TEXT,
    to_date TEXT,
    matched INTEGER NOT NULL DEFAULT 0,
    amount_differs INTEGER NOT NULL DEFAULT 0,
    suggested INTEGER NOT NULL DEFAULT 0,
    unmatched INTEGER NOT NULL DEFAULT 0,
    ignored INTEGER NOT NULL DEFAULT 0,
    duplicate_lines INTEGER NOT NULL,
    deposit_lines INTEGER NOT NULL,
    skipped_rows INTEGER NOT NULL,
    is_active INTEGER NOT NULL DEFAULT 1 CHECK (is_active IN (0, 1)),
    created_at INTEGER NOT NULL
) STRICT;
-- The account's other active statements, whose lines an upload's duplicates are looked up in.
CREATE INDEX bank_statements_by_account ON bank_statements (account) WHERE is_active;

-- A kept line: money out, positive. `holds` is true while the line holds its payment (a
-- payment on its own or a whole vendor payment) and its statement is active.
CREATE TABLE bank_lines (
    id INTEGER PRIMARY KEY,
    statement_id INTEGER NOT NULL REFERENCES bank_statements (id),
    line_number INTEGER NOT NULL,
    date TEXT NOT NULL,
    narration TEXT,
    reference TEXT,
    amount INTEGER NOT NULL CHECK (amount > 0),
    status TEXT NOT NULL CHECK (status IN ('Matched', 'AmountDiffers', 'Suggested', 'Unmatched', 'Ignored')),
    matched_by TEXT CHECK (matched_by IN ('Reference', 'AmountAndDate', 'Hand')),
    transaction_id INTEGER REFERENCES transactions (id),
    vendor_payment_id INTEGER REFERENCES vendor_payments (id),
    holds INTEGER NOT NULL DEFAULT 0 CHECK (holds IN (0, 1))
) STRICT;
-- A statement's lines by number, all or of one status; its lines of a day (duplicates).
CREATE UNIQUE INDEX bank_lines_by_number ON bank_lines (statement_id, line_number);
CREATE INDEX bank_lines_by_status ON bank_lines (statement_id, status, line_number);
CREATE INDEX bank_lines_by_date ON bank_lines (statement_id, date);
-- D46: a payment is held by one line of the active statements at most. The store decides it
-- under the bank statements' lock; these indexes are the last guard, and what the matching
-- and the uncleared payments look up.
CREATE UNIQUE INDEX bank_lines_holding_payment ON bank_lines (transaction_id) WHERE holds;
CREATE UNIQUE INDEX bank_lines_holding_vendor_payment ON bank_lines (vendor_payment_id) WHERE holds;
-- Vendor payments of a few days and amounts, which a line may be suggested.
CREATE INDEX vendor_payments_by_date ON vendor_payments (transaction_date, amount);

-- D46: permissions 34 to 37, for admins alone by default (no policy grants them). A database
-- created by this version has them from its seed already.
INSERT INTO permissions (id, collection, action, description) VALUES
    (34, 'BankStatement', 'Read', 'View bank statements'),
    (35, 'BankStatement', 'Create', 'Create bank statements'),
    (36, 'BankStatement', 'Update', 'Update bank statements'),
    (37, 'BankStatement', 'Delete', 'Delete bank statements')
ON CONFLICT DO NOTHING;
