-- pharmapay schema, version 18, for SQLite: the event feed and webhooks (D47).

-- An event, written by its write in the write's transaction (the outbox). `seq` numbers
-- events as they are written; `position`, the id readers see, is given once the write has
-- committed, by one sequencer at a time, in the order it finds them (see `event_positions`).
CREATE TABLE events (
    seq INTEGER PRIMARY KEY,
    position INTEGER,
    kind TEXT NOT NULL,
    occurred_at INTEGER NOT NULL,
    data TEXT NOT NULL
) STRICT;
-- The feed, by position; the events still waiting for one.
CREATE UNIQUE INDEX events_by_position ON events (position) WHERE position IS NOT NULL;
CREATE INDEX events_unplaced ON events (seq) WHERE position IS NULL;
-- When old events are removed (retention), by the instant of their write.
CREATE INDEX events_by_age ON events (occurred_at);

-- The last position given: positions are never given twice, even once the events holding
-- them are removed.
CREATE TABLE event_positions (
    last INTEGER NOT NULL
) STRICT;
INSERT INTO event_positions (last) VALUES (0);

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

-- D47: permissions 38 to 41, for admins alone by default (no policy grants them). A database
-- created by this version has them from its seed already.
INSERT INTO permissions (id, collection, action, description) VALUES
    (38, 'Webhook', 'Read', 'View webhooks and events'),
    (39, 'Webhook', 'Create', 'Create webhooks and events'),
    (40, 'Webhook', 'Update', 'Update webhooks and events'),
    (41, 'Webhook', 'Delete', 'Delete webhooks and events')
ON CONFLICT DO NOTHING;
