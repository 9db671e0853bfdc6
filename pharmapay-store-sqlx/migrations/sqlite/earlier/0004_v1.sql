-- pharmapay schema, version 4, for SQLite: figures kept beside the rows (D41) and indexed
-- search.
--
-- Kept figures are running totals that the store changes in the same transaction as every
-- write that moves them, by the change `pharmapay_core::figures` computes from the rows the
-- write touches; no trigger computes them, so the rule of what a row contributes lives once, in
-- core. Sums of money that can pass 64 bits (a vendor's invoices, a day's payments, the
-- installation's totals) are kept as exact pairs `<name>_high`, `<name>_low` of ten-thousandths,
-- value = high * 2^32 + low with 0 <= low < 2^32, which sort like the value itself. The store
-- fills every figure from the rows right after this file runs (in the same transaction), so an
-- existing database upgrades in place.

-- Each vendor's figures over its active invoices (D11): how many, their amounts, and what they
-- still owe (amounts less paid totals), so reading a vendor or ranking vendors by balance reads
-- one row each.
ALTER TABLE vendors ADD COLUMN active_invoices INTEGER NOT NULL DEFAULT 0;
ALTER TABLE vendors ADD COLUMN invoiced_high INTEGER NOT NULL DEFAULT 0;
ALTER TABLE vendors ADD COLUMN invoiced_low INTEGER NOT NULL DEFAULT 0;
ALTER TABLE vendors ADD COLUMN outstanding_high INTEGER NOT NULL DEFAULT 0;
ALTER TABLE vendors ADD COLUMN outstanding_low INTEGER NOT NULL DEFAULT 0;
-- The vendor list sorted by balance, either way, with the id as tie-breaker (D8).
CREATE INDEX vendors_by_outstanding ON vendors (is_active, outstanding_high, outstanding_low, id);
-- The dashboard's top vendors: balance descending, then name, then id (D12).
CREATE INDEX vendors_ranked ON vendors (is_active, outstanding_high DESC, outstanding_low DESC, name_key, id);

-- Active payments per business day (YYYYMMDD in the TimeZone setting's zone, D3): the
-- dashboard's twelve months read at most 366 rows and its recent payments 30. A change of the
-- TimeZone setting recounts them in the same transaction.
CREATE TABLE payment_days (
    day INTEGER PRIMARY KEY,
    payments INTEGER NOT NULL,
    amount_high INTEGER NOT NULL,
    amount_low INTEGER NOT NULL
) STRICT;

-- The installation's totals, one row: what the dashboard's summary shows and the totals of the
-- unfiltered lists.
CREATE TABLE ledger_totals (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    vendors INTEGER NOT NULL,
    active_vendors INTEGER NOT NULL,
    invoices INTEGER NOT NULL,
    active_invoices INTEGER NOT NULL,
    -- Active invoices still owing something (amount above paid): Overdue or PartiallyPaid.
    open_invoices INTEGER NOT NULL,
    invoiced_high INTEGER NOT NULL,
    invoiced_low INTEGER NOT NULL,
    invoice_paid_high INTEGER NOT NULL,
    invoice_paid_low INTEGER NOT NULL,
    payments INTEGER NOT NULL,
    active_payments INTEGER NOT NULL,
    paid_out_high INTEGER NOT NULL,
    paid_out_low INTEGER NOT NULL
) STRICT;
INSERT INTO ledger_totals VALUES (1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0);

-- The open counts per due date of version 2 are kept by the store from now on, like every
-- other figure.
DROP TRIGGER invoices_open_on_insert;
DROP TRIGGER invoices_open_on_update_leave;
DROP TRIGGER invoices_open_on_update_enter;
DROP TRIGGER invoices_open_on_delete;

-- Search (case-insensitive substring, on the lower-cased keys) uses trigram indexes: FTS5
-- tables over the keys, kept by the triggers below like any other index. A search of three
-- characters or more looks its trigrams up; shorter ones cannot, and scan.
CREATE VIRTUAL TABLE invoice_number_search USING fts5(
    number_key, content = 'invoices', content_rowid = 'id', tokenize = 'trigram case_sensitive 1'
);
CREATE VIRTUAL TABLE vendor_name_search USING fts5(
    name_key, content = 'vendors', content_rowid = 'id', tokenize = 'trigram case_sensitive 1'
);
INSERT INTO invoice_number_search (invoice_number_search) VALUES ('rebuild');
INSERT INTO vendor_name_search (vendor_name_search) VALUES ('rebuild');

CREATE TRIGGER invoice_number_search_insert AFTER INSERT ON invoices BEGIN
    INSERT INTO invoice_number_search (rowid, number_key) VALUES (NEW.id, NEW.number_key);
END;
CREATE TRIGGER invoice_number_search_update AFTER UPDATE OF number_key ON invoices BEGIN
    INSERT INTO invoice_number_search (invoice_number_search, rowid, number_key) VALUES ('delete', OLD.id, OLD.number_key);
    INSERT INTO invoice_number_search (rowid, number_key) VALUES (NEW.id, NEW.number_key);
END;
CREATE TRIGGER invoice_number_search_delete AFTER DELETE ON invoices BEGIN
    INSERT INTO invoice_number_search (invoice_number_search, rowid, number_key) VALUES ('delete', OLD.id, OLD.number_key);
END;
CREATE TRIGGER vendor_name_search_insert AFTER INSERT ON vendors BEGIN
    INSERT INTO vendor_name_search (rowid, name_key) VALUES (NEW.id, NEW.name_key);
END;
CREATE TRIGGER vendor_name_search_update AFTER UPDATE OF name_key ON vendors BEGIN
    INSERT INTO vendor_name_search (vendor_name_search, rowid, name_key) VALUES ('delete', OLD.id, OLD.name_key);
    INSERT INTO vendor_name_search (rowid, name_key) VALUES (NEW.id, NEW.name_key);
END;
CREATE TRIGGER vendor_name_search_delete AFTER DELETE ON vendors BEGIN
    INSERT INTO vendor_name_search (vendor_name_search, rowid, name_key) VALUES ('delete', OLD.id, OLD.name_key);
END;
