-- A database migrated by a build whose version 13 had the open invoices' index without
-- `is_active` and no index of the vendors owed something: both as version 13 holds them since.
DROP INDEX invoices_open_by_vendor;
CREATE INDEX invoices_open_by_vendor ON invoices (vendor_id, due_date, amount, paid, is_active)
    WHERE is_active AND amount > paid;
CREATE INDEX vendors_owing ON vendors (open_invoices) WHERE open_invoices > 0;
