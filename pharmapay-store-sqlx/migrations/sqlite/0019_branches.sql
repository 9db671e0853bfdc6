-- pharmapay schema, version 19, for SQLite: the chain's branches (D49).

-- A branch. `code` is kept upper-cased (core's `branches::code_of`) and is unique among active
-- branches; a deleted branch keeps its code, which another may take meanwhile. Branch 1 is the
-- head office from the first start and is never deleted.
CREATE TABLE branches (
    id INTEGER PRIMARY KEY,
    code TEXT NOT NULL,
    name TEXT NOT NULL,
    gstin TEXT,
    address TEXT,
    phone TEXT,
    drug_license_number TEXT,
    is_active INTEGER NOT NULL DEFAULT 1 CHECK (is_active IN (0, 1)),
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL
) STRICT;

CREATE UNIQUE INDEX branches_active_code ON branches (code) WHERE is_active;

-- The head office: named after the pharmacy's own vendor on a database onboarded already,
-- `Head office` until onboarding names it otherwise.
INSERT INTO branches (id, code, name, is_active, created_at, updated_at)
VALUES (
    1,
    'HO',
    COALESCE((SELECT name FROM vendors WHERE vendor_type = 'OwnPharmacy' ORDER BY id LIMIT 1), 'Head office'),
    1,
    0,
    0
);

-- D49: permissions 42 to 45, and `Branch:Read` for the seeded Pharmacist Default policy. A
-- database created by this version has them from its seed already.
INSERT INTO permissions (id, collection, action, description) VALUES
    (42, 'Branch', 'Read', 'View branches'),
    (43, 'Branch', 'Create', 'Create branches'),
    (44, 'Branch', 'Update', 'Update branches'),
    (45, 'Branch', 'Delete', 'Delete branches')
ON CONFLICT DO NOTHING;

INSERT INTO policy_permissions (policy_id, permission_id)
SELECT 1, 42 WHERE EXISTS (SELECT 1 FROM policies WHERE id = 1)
ON CONFLICT DO NOTHING;
