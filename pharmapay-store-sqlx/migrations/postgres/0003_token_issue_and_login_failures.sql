-- pharmapay schema, version 3, for PostgreSQL: tokens that carry their issue second (D39) and
-- a login window that counts failures only (D40).

-- The latest `iat` (Unix seconds) issued to the user. A revocation covers every token issued so
-- far, even one dated a second ahead of the clock; 0 means none was issued since this version.
ALTER TABLE users ADD COLUMN last_token_issued BIGINT NOT NULL DEFAULT 0;

-- The rows counted attempts in flight under the previous rule. Their windows last a quarter of
-- an hour, so starting afresh forgets nothing that still matters.
DELETE FROM login_attempts;
-- Failed password checks in the window that opened with the first of them (D21).
ALTER TABLE login_attempts RENAME COLUMN n_attempts TO failures;
-- Whether the window's throttling was noted in the audit log: at most once per window (D40).
ALTER TABLE login_attempts ADD COLUMN throttle_noted BOOLEAN NOT NULL DEFAULT FALSE;
-- Rows of closed windows are purged by their start.
CREATE INDEX login_attempts_by_window_start ON login_attempts (window_start);
