-- A database migrated by a build whose version 13 had no index of the vendors owed something.
CREATE INDEX vendors_owing ON vendors (open_invoices) WHERE open_invoices > 0;
