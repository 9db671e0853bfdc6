-- pharmapay schema, version 18, for SQLite: the event feed (D47).

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

-- D47: permissions 38 to 41, for admins alone by default (no policy grants them). A database
-- created by this version has them from its seed already.
INSERT INTO permissions (id, collection, action, description) VALUES
    (38, 'Webhook', 'Read', 'View webhooks and events'),
    (39, 'Webhook', 'Create', 'Create webhooks and events'),
    (40, 'Webhook', 'Update', 'Update webhooks and events'),
    (41, 'Webhook', 'Delete', 'Delete webhooks and events')
ON CONFLICT DO NOTHING;
