-- Bulk loads (ImportStore::begin_bulk_load): the definitions of the indexes and triggers a long
-- run of imports sets aside, kept here until they are built again, so a load that stops half
-- way is finished when the store next opens.
CREATE TABLE deferred_schema (
    name TEXT PRIMARY KEY,
    kind TEXT NOT NULL CHECK (kind IN ('index', 'trigger')),
    definition TEXT NOT NULL
);
