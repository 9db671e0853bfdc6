-- A database migrated by a build whose version 18 had the event feed alone: the webhooks and
-- their deliveries as version 18 holds them since, and without the index of events by age,
-- which version 18 no longer keeps.
DROP INDEX events_by_age;

-- A webhook: where the events it takes are posted, signed with its secret. `cursor` is the
-- last position it was given deliveries for; it starts at the feed's end when it is created.
CREATE TABLE webhooks (
    id INTEGER PRIMARY KEY,
    url TEXT NOT NULL,
    -- The event types it takes, as a JSON list, or ["*"].
    events TEXT NOT NULL,
    description TEXT,
    is_active INTEGER NOT NULL CHECK (is_active IN (0, 1)),
    secret TEXT NOT NULL,
    cursor INTEGER NOT NULL,
    created_at INTEGER NOT NULL
) STRICT;

-- One event's delivery to one webhook. A server trying it holds it until `claimed_until`.
CREATE TABLE webhook_deliveries (
    id INTEGER PRIMARY KEY,
    webhook_id INTEGER NOT NULL REFERENCES webhooks (id),
    event_id INTEGER NOT NULL,
    kind TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('Pending', 'Delivered', 'Failed')),
    attempts INTEGER NOT NULL,
    last_status_code INTEGER,
    last_error TEXT,
    next_attempt_at INTEGER,
    delivered_at INTEGER,
    created_at INTEGER NOT NULL,
    claimed_until INTEGER
) STRICT;
-- A webhook's deliveries, newest first; the pending ones by when they fall due, and by event
-- (which events retention must keep); those claimed, counted per webhook.
CREATE INDEX webhook_deliveries_by_webhook ON webhook_deliveries (webhook_id, event_id, id);
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at, event_id) WHERE status = 'Pending';
CREATE INDEX webhook_deliveries_pending_events ON webhook_deliveries (event_id) WHERE status = 'Pending';
CREATE INDEX webhook_deliveries_claimed ON webhook_deliveries (claimed_until) WHERE claimed_until IS NOT NULL;
