-- Open invoices by due date: how many active invoices with something still pending (amount
-- above paid) fall due on each stored due date. An open invoice is Overdue when its due date is
-- before today and PartiallyPaid otherwise (D10), so the total count of a list filtered by one
-- of those two statuses alone is a sum over at most one row per due date instead of a count
-- over every invoice: at a chain's scale that is the difference between a second and a
-- millisecond. Status itself stays computed on read; only this count is kept.
--
-- Statement-level triggers keep it in the same transaction as every write to an invoice
-- (create, change, cancel, restore, each payment that moves `paid`, imports). Each statement's
-- changes are summed per due date first and applied in due-date order, and only buckets whose
-- count really changes are written, so a payment that leaves its invoice open takes no lock
-- here and two statements lock the buckets they share in the same order. A row whose count has
-- dropped to zero stays and adds nothing.
CREATE TABLE invoice_open_counts (
    due_date BIGINT PRIMARY KEY,
    open_count BIGINT NOT NULL
);

INSERT INTO invoice_open_counts (due_date, open_count)
SELECT due_date, COUNT(*) FROM invoices WHERE is_active AND amount > paid GROUP BY due_date;

CREATE FUNCTION invoice_open_counts_follow() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        INSERT INTO invoice_open_counts AS c (due_date, open_count)
        SELECT due_date, COUNT(*) FROM new_rows WHERE is_active AND amount > paid
        GROUP BY due_date ORDER BY due_date
        ON CONFLICT (due_date) DO UPDATE SET open_count = c.open_count + EXCLUDED.open_count;
    ELSIF TG_OP = 'UPDATE' THEN
        INSERT INTO invoice_open_counts AS c (due_date, open_count)
        SELECT due_date, SUM(change)::BIGINT FROM (
            SELECT due_date, -1 AS change FROM old_rows WHERE is_active AND amount > paid
            UNION ALL
            SELECT due_date, 1 AS change FROM new_rows WHERE is_active AND amount > paid
        ) AS changes
        GROUP BY due_date HAVING SUM(change) <> 0 ORDER BY due_date
        ON CONFLICT (due_date) DO UPDATE SET open_count = c.open_count + EXCLUDED.open_count;
    ELSE
        INSERT INTO invoice_open_counts AS c (due_date, open_count)
        SELECT due_date, -COUNT(*) FROM old_rows WHERE is_active AND amount > paid
        GROUP BY due_date ORDER BY due_date
        ON CONFLICT (due_date) DO UPDATE SET open_count = c.open_count + EXCLUDED.open_count;
    END IF;
    RETURN NULL;
END;
$$;

CREATE TRIGGER invoices_open_on_insert AFTER INSERT ON invoices
REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION invoice_open_counts_follow();
CREATE TRIGGER invoices_open_on_update AFTER UPDATE ON invoices
REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION invoice_open_counts_follow();
CREATE TRIGGER invoices_open_on_delete AFTER DELETE ON invoices
REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION invoice_open_counts_follow();
