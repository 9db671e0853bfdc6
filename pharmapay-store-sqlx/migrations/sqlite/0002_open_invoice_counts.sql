-- Open invoices by due date: how many active invoices with something still pending (amount
-- above paid) fall due on each stored due date. An open invoice is Overdue when its due date is
-- before today and PartiallyPaid otherwise (D10), so the total count of a list filtered by one
-- of those two statuses alone is a sum over at most one row per due date instead of a count
-- over every invoice: at a chain's scale that is the difference between a second and a
-- millisecond. Status itself stays computed on read; only this count is kept.
--
-- The triggers below keep it in the same transaction as every write to an invoice (create,
-- change, cancel, restore, each payment that moves `paid`, imports), whatever statement makes
-- it. A row whose count has dropped to zero stays and adds nothing.
CREATE TABLE invoice_open_counts (
    due_date INTEGER PRIMARY KEY,
    open_count INTEGER NOT NULL
) STRICT;

INSERT INTO invoice_open_counts (due_date, open_count)
SELECT due_date, COUNT(*) FROM invoices WHERE is_active AND amount > paid GROUP BY due_date;

CREATE TRIGGER invoices_open_on_insert AFTER INSERT ON invoices
WHEN NEW.is_active AND NEW.amount > NEW.paid
BEGIN
    INSERT OR IGNORE INTO invoice_open_counts (due_date, open_count) VALUES (NEW.due_date, 0);
    UPDATE invoice_open_counts SET open_count = open_count + 1 WHERE due_date = NEW.due_date;
END;

-- An update leaves the old row's bucket when the old row was open and the new one is not open
-- on the same due date, and enters the new row's bucket in the mirror case; an update that
-- keeps an open invoice open on its due date touches nothing.
CREATE TRIGGER invoices_open_on_update_leave AFTER UPDATE OF is_active, amount, paid, due_date ON invoices
WHEN (OLD.is_active AND OLD.amount > OLD.paid)
    AND NOT (NEW.is_active AND NEW.amount > NEW.paid AND NEW.due_date = OLD.due_date)
BEGIN
    UPDATE invoice_open_counts SET open_count = open_count - 1 WHERE due_date = OLD.due_date;
END;

CREATE TRIGGER invoices_open_on_update_enter AFTER UPDATE OF is_active, amount, paid, due_date ON invoices
WHEN (NEW.is_active AND NEW.amount > NEW.paid)
    AND NOT (OLD.is_active AND OLD.amount > OLD.paid AND OLD.due_date = NEW.due_date)
BEGIN
    INSERT OR IGNORE INTO invoice_open_counts (due_date, open_count) VALUES (NEW.due_date, 0);
    UPDATE invoice_open_counts SET open_count = open_count + 1 WHERE due_date = NEW.due_date;
END;

CREATE TRIGGER invoices_open_on_delete AFTER DELETE ON invoices
WHEN OLD.is_active AND OLD.amount > OLD.paid
BEGIN
    UPDATE invoice_open_counts SET open_count = open_count - 1 WHERE due_date = OLD.due_date;
END;
