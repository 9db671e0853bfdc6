-- pharmapay schema, version 6, for PostgreSQL: the vendor master (D36, D37).

-- The day a vendor's drug licence is valid until, as an instant like every stored date (D36).
-- Its status (Unknown, Expired, ExpiringSoon, Valid) depends on today and is computed on read.
ALTER TABLE vendors ADD COLUMN drug_license_valid_until BIGINT;
-- The vendor's GSTIN, upper-cased and checked by `pharmapay_core::domain::gstin` (D37).
ALTER TABLE vendors ADD COLUMN gstin TEXT;

-- D37: a GSTIN belongs to one active vendor. The store checks first and answers Conflict; this
-- index is the last guard.
CREATE UNIQUE INDEX vendors_active_gstin ON vendors (gstin) WHERE is_active AND gstin IS NOT NULL;
-- The licence alerts and the licenseStatus filter compare validity dates.
CREATE INDEX vendors_by_licence ON vendors (drug_license_valid_until) WHERE drug_license_valid_until IS NOT NULL;

-- D36: what an expired licence does to new invoices, Warn (the default) or Block. A database
-- created by this version has it from its seed already.
INSERT INTO settings (key, value, description)
VALUES ('ExpiredLicensePolicy', 'Warn', 'Warn or Block: whether invoices dated after a vendor''s drug licence expired are refused')
ON CONFLICT (key) DO NOTHING;
