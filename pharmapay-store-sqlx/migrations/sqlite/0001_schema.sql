-- pharmapay schema, version 1, for SQLite.
--
-- Conventions (see ../README.md):
-- * Tables are STRICT, so a value of the wrong type is an error instead of being stored as
--   another type. In particular no amount can ever become a REAL: SQLite turns an integer
--   overflow into a float, and a STRICT INTEGER column refuses it.
-- * `id INTEGER PRIMARY KEY` is the rowid. Rows are never removed (deletes are soft), so ids
--   count up from 1 without reuse, as in the memory store.
-- * Money: INTEGER ten-thousandths (D1). Instants: INTEGER microseconds since the epoch.
-- * Booleans: INTEGER 0 or 1. A bare `is_active` in a WHERE clause means "is active".
-- * `*_key` columns hold `pharmapay_core::text::key` of the text beside them, computed in Rust.
--   The BINARY collation compares them byte by byte, exactly as Rust compares strings.
-- The seed data of D27 is written by the store in the same transaction as this file.

-- Vendors: the pharmacy's suppliers plus its own pharmacy (D14).
CREATE TABLE vendors (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    -- Lower-cased name: vendor search, the name sort and top-vendor ties compare it.
    name_key TEXT NOT NULL,
    vendor_type TEXT NOT NULL
        CHECK (vendor_type IN ('Manufacturer', 'Wholesaler', 'Agency', 'Dealer', 'Pharmacy', 'OwnPharmacy')),
    address TEXT,
    phone TEXT,
    email TEXT,
    drug_license_number1 TEXT,
    drug_license_number2 TEXT,
    -- A JSON array of strings. The numbers are only ever read with their vendor.
    additional_drug_license_numbers TEXT NOT NULL DEFAULT '[]',
    is_active INTEGER NOT NULL DEFAULT 1 CHECK (is_active IN (0, 1)),
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL
) STRICT;

-- At most one OwnPharmacy vendor exists (D14); onboarding makes it, nothing else may.
CREATE UNIQUE INDEX vendors_one_own_pharmacy ON vendors (vendor_type) WHERE vendor_type = 'OwnPharmacy';
-- The default vendor list: active (or deleted) vendors by name; the rowid breaks ties.
CREATE INDEX vendors_by_name ON vendors (is_active, name_key);

-- Invoices: what the pharmacy owes.
CREATE TABLE invoices (
    id INTEGER PRIMARY KEY,
    vendor_id INTEGER NOT NULL REFERENCES vendors (id),
    invoice_number TEXT NOT NULL,
    -- Lower-cased number: uniqueness among active invoices (D4) and search.
    number_key TEXT NOT NULL,
    amount INTEGER NOT NULL CHECK (amount > 0),
    -- The exact sum of the invoice's active payments, changed in the same transaction as every
    -- payment write and import, so reading an invoice, a vendor's totals or a page sorted by
    -- pending never sums payments (D10).
    paid INTEGER NOT NULL DEFAULT 0,
    invoice_date INTEGER NOT NULL,
    due_date INTEGER NOT NULL,
    description TEXT,
    is_active INTEGER NOT NULL DEFAULT 1 CHECK (is_active IN (0, 1)),
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL
) STRICT;

-- D4: an invoice number is unique among active invoices; a canceled invoice frees its number.
-- The store checks first and answers Conflict; this index is the last guard.
CREATE UNIQUE INDEX invoices_active_number_key ON invoices (number_key) WHERE is_active;
-- Pages sorted by pending amount (the dashboard's "most owed" views).
CREATE INDEX invoices_by_pending ON invoices ((amount - paid), id);
-- A vendor's totals over its active invoices (D11) read this index alone; it also serves the
-- vendorId filter.
CREATE INDEX invoices_by_vendor ON invoices (vendor_id, is_active, amount, paid);
-- The default invoice list (newest invoice date first) and the due-date sort.
CREATE INDEX invoices_by_invoice_date ON invoices (invoice_date, id);
CREATE INDEX invoices_by_due_date ON invoices (due_date, id);
-- Recent invoices on the dashboard (D12): newest created first.
CREATE INDEX invoices_by_created_at ON invoices (created_at, id);

-- Payment transactions: partial payments against an invoice.
CREATE TABLE transactions (
    id INTEGER PRIMARY KEY,
    invoice_id INTEGER NOT NULL REFERENCES invoices (id),
    amount INTEGER NOT NULL CHECK (amount > 0),
    transaction_date INTEGER NOT NULL,
    transaction_type TEXT NOT NULL CHECK (transaction_type IN ('Cash', 'UPI', 'NetBanking')),
    description TEXT,
    is_active INTEGER NOT NULL DEFAULT 1 CHECK (is_active IN (0, 1)),
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL
) STRICT;

-- An invoice's payments (the invoiceId filter).
CREATE INDEX transactions_by_invoice ON transactions (invoice_id);
-- Covering index for the dashboard: monthly totals, total paid and recent payments read only
-- this index (D12). It also orders the default payment list (newest payment date first).
CREATE INDEX transactions_by_date ON transactions (transaction_date, is_active, amount);

-- Roles (D19, D27). Names are unique among all roles, deleted ones included (D4).
CREATE TABLE roles (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    name_key TEXT NOT NULL,
    description TEXT NOT NULL,
    is_system INTEGER NOT NULL DEFAULT 0 CHECK (is_system IN (0, 1)),
    is_active INTEGER NOT NULL DEFAULT 1 CHECK (is_active IN (0, 1)),
    created_at INTEGER NOT NULL
) STRICT;

CREATE UNIQUE INDEX roles_name_key ON roles (name_key);

-- Permissions: seeded once (D27) and never changed.
CREATE TABLE permissions (
    id INTEGER PRIMARY KEY,
    collection TEXT NOT NULL,
    action TEXT NOT NULL,
    description TEXT NOT NULL
) STRICT;

-- Policies: named sets of permissions; names are unique among active policies (D4).
CREATE TABLE policies (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    name_key TEXT NOT NULL,
    description TEXT NOT NULL,
    is_active INTEGER NOT NULL DEFAULT 1 CHECK (is_active IN (0, 1)),
    created_at INTEGER NOT NULL
) STRICT;

CREATE UNIQUE INDEX policies_active_name_key ON policies (name_key) WHERE is_active;

CREATE TABLE policy_permissions (
    policy_id INTEGER NOT NULL REFERENCES policies (id),
    permission_id INTEGER NOT NULL REFERENCES permissions (id),
    PRIMARY KEY (policy_id, permission_id)
) STRICT;

-- Policies attached to roles and directly to users (D19).
CREATE TABLE role_policies (
    role_id INTEGER NOT NULL REFERENCES roles (id),
    policy_id INTEGER NOT NULL REFERENCES policies (id),
    PRIMARY KEY (role_id, policy_id)
) STRICT;

-- Users: emails are unique among active users (D4).
CREATE TABLE users (
    id INTEGER PRIMARY KEY,
    first_name TEXT NOT NULL,
    last_name TEXT NOT NULL,
    email TEXT NOT NULL,
    email_key TEXT NOT NULL,
    role_id INTEGER NOT NULL REFERENCES roles (id),
    -- Argon2id PHC string (D29); never leaves the store except for login checks.
    password_hash TEXT NOT NULL,
    -- Tokens issued in or before this instant no longer work (D20); 0 revokes nothing.
    tokens_revoked_at INTEGER NOT NULL DEFAULT 0,
    is_active INTEGER NOT NULL DEFAULT 1 CHECK (is_active IN (0, 1)),
    created_at INTEGER NOT NULL
) STRICT;

CREATE UNIQUE INDEX users_active_email_key ON users (email_key) WHERE is_active;
-- Logins look an email up among deleted users too.
CREATE INDEX users_by_email_key ON users (email_key);

CREATE TABLE user_policies (
    user_id INTEGER NOT NULL REFERENCES users (id),
    policy_id INTEGER NOT NULL REFERENCES policies (id),
    PRIMARY KEY (user_id, policy_id)
) STRICT;

-- Settings: seeded keys whose values alone may change (D3, D27).
CREATE TABLE settings (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL,
    description TEXT NOT NULL
) STRICT;

-- The audit log (D22): one row per write, login and failed login. Never changed.
CREATE TABLE audit_log (
    id INTEGER PRIMARY KEY,
    at INTEGER NOT NULL,
    -- No foreign key: the log keeps entries about anyone, including unknown emails.
    user_id INTEGER,
    action TEXT NOT NULL,
    entity TEXT NOT NULL,
    -- ASCII-lower-cased entity: the entity filter matches case-insensitively.
    entity_key TEXT NOT NULL,
    entity_id INTEGER,
    -- The reason of a delete (D16).
    reason TEXT,
    -- The values written, as a JSON object.
    changes TEXT
) STRICT;

-- The log is read newest first, whole or filtered by record or by user.
CREATE INDEX audit_log_by_at ON audit_log (at, id);
CREATE INDEX audit_log_by_entity ON audit_log (entity_key, entity_id);
CREATE INDEX audit_log_by_user ON audit_log (user_id);

-- Idempotency keys (D23), per user. A write completes its claim (entity_id) in its own
-- transaction, so a key never points at a record that does not exist.
CREATE TABLE idempotency_keys (
    user_id INTEGER NOT NULL,
    key TEXT NOT NULL,
    fingerprint TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    entity_id INTEGER,
    -- The response sent for the completed request, replayed byte for byte.
    response BLOB,
    PRIMARY KEY (user_id, key)
) STRICT;

-- Failed-login counting per email (D21): the window's start and the attempts counted in it.
CREATE TABLE login_attempts (
    email_key TEXT PRIMARY KEY,
    window_start INTEGER NOT NULL,
    n_attempts INTEGER NOT NULL
) STRICT;

-- Facts about the installation, such as the token signing secret kept for D28.
CREATE TABLE store_meta (
    name TEXT PRIMARY KEY,
    value TEXT NOT NULL
) STRICT;
