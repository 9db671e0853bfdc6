-- pharmapay schema, version 22, for SQLite: each user's branches (D49).

-- The branches a user sees and writes in: NULL for every branch, else a JSON array of branch
-- ids in id order. Every user kept before scopes existed sees every branch, as admins always do.
ALTER TABLE users ADD COLUMN branch_ids TEXT;
