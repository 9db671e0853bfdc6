-- pharmapay schema, version 15, for SQLite: vendor credits (D44).

-- A claim on a distributor for stock returned or a rate difference, and the distributor's
-- decision on it. `accepted` is null until decided; `applied` is the exact sum of the credit's
-- active applications, changed in the same transaction as each of them.
CREATE TABLE vendor_credits (
    id INTEGER PRIMARY KEY,
    vendor_id INTEGER NOT NULL REFERENCES vendors (id),
    credit_number TEXT NOT NULL,
    -- Lower-cased number: unique among the vendor's active credits (D4, D44).
    number_key TEXT NOT NULL,
    kind TEXT NOT NULL CHECK (kind IN ('ExpiryReturn', 'Breakage', 'RateDifference', 'Other')),
    claimed INTEGER NOT NULL CHECK (claimed > 0),
    claim_date INTEGER NOT NULL,
    against_invoice_id INTEGER REFERENCES invoices (id),
    accepted INTEGER CHECK (accepted >= 0 AND accepted <= claimed),
    decision_date INTEGER,
    distributor_reference TEXT,
    applied INTEGER NOT NULL DEFAULT 0 CHECK (applied >= 0),
    description TEXT,
    is_active INTEGER NOT NULL DEFAULT 1 CHECK (is_active IN (0, 1)),
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL
) STRICT;

-- D44: the store checks first and answers Conflict; this index is the last guard.
CREATE UNIQUE INDEX vendor_credits_number ON vendor_credits (vendor_id, number_key) WHERE is_active;
-- The list: newest claim first, then id descending.
CREATE INDEX vendor_credits_by_claim_date ON vendor_credits (claim_date, id);
-- Claims still undecided, oldest first: the ones to chase.
CREATE INDEX vendor_credits_undecided ON vendor_credits (claim_date) WHERE is_active AND accepted IS NULL;

-- D44: permissions 30 to 33, after the audit log's, and the Pharmacist Default policy's new
-- grants. A database created by this version has them from its seed already.
INSERT INTO permissions (id, collection, action, description) VALUES
    (30, 'VendorCredit', 'Read', 'View vendor credits'),
    (31, 'VendorCredit', 'Create', 'Create vendor credits'),
    (32, 'VendorCredit', 'Update', 'Update vendor credits'),
    (33, 'VendorCredit', 'Delete', 'Delete vendor credits')
ON CONFLICT DO NOTHING;
INSERT INTO policy_permissions (policy_id, permission_id)
SELECT 1, p.id FROM permissions p WHERE p.id IN (30, 31, 32) AND EXISTS (SELECT 1 FROM policies WHERE id = 1)
ON CONFLICT DO NOTHING;
