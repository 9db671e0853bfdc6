-- A database migrated by a build whose version 18 kept an index of events by age, which
-- version 18 no longer keeps.
DROP INDEX events_by_age;
