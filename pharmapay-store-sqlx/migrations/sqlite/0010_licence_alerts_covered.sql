-- The licence alerts (D36) list every active vendor whose licence has expired or expires soon:
-- about a thousand at a chain's scale. Read along an index of the valid-until instant alone,
-- each needed a lookup of its vendor row for its state, name and first licence number, which
-- was most of SQLite's work for the list. The index now holds those columns too (and the id, as
-- every SQLite index does), so the list is one pass over it. Its first column still serves the
-- vendor list's licence status filters. Payments update other vendor columns and leave it alone.
DROP INDEX IF EXISTS vendors_by_licence;
CREATE INDEX vendors_by_licence ON vendors (drug_license_valid_until, is_active, name, drug_license_number1)
    WHERE drug_license_valid_until IS NOT NULL;
