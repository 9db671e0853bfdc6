//! The SQLite backend: connection settings, write transactions and the migration list.
//!
//! The store body is `common/`, compiled here over [`sqlx::Sqlite`]. What this module
//! decides:
//! - Writers are serialised: one writer connection, and every write transaction begins with
//!   `BEGIN IMMEDIATE`, which takes the database's write lock at once. A transaction that
//!   first read and later wrote could otherwise fail with "database is locked" when another
//!   writer got there first; with the lock taken up front, concurrent writers in this process
//!   queue for the writer connection and writers in other processes wait up to the busy
//!   timeout. Because writers hold the whole database, no row locks are needed
//!   (`for_update!` and `for_share!` are empty) and the advisory locks are no-ops.
//! - Readers use a separate pool of `query_only` connections; WAL lets them read while the
//!   writer writes.
//! - Writes that queue for the writer share one transaction and one commit (group commit,
//!   `crate::group_commit`): each runs in a savepoint of its own, and none is answered before
//!   its batch is on disk.
//! - WAL journal, `synchronous = FULL` by default (see the crate docs for the cost), foreign
//!   keys on, a busy timeout, and the file created on first connect.
//!
//! In-memory databases are refused: sqlx shares them between connections through SQLite's
//! shared cache, which locks differently (table locks that the busy timeout does not cover)
//! and loses the data with the last connection. `pharmapay-store-memory` is the in-memory
//! store.

use std::str::FromStr;

use sqlx::Row;
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions, SqliteSynchronous};
use tracing::info;

use crate::error::Error;
pub(crate) use crate::options::Location;
use crate::{SqliteDurability, StoreOptions, Table, Target, target};

// SQLite has no row locks: a write transaction holds the whole database from its start.
macro_rules! for_update {
    () => {
        ""
    };
}
/// How text compares in byte order, as Rust compares strings, where a column's own collation
/// may differ.
macro_rules! byte_order {
    () => {
        ""
    };
}
macro_rules! for_share {
    () => {
        ""
    };
}

mod dialect;

// The store body is shared with the postgres backend on purpose: same file, other `Db`.
#[allow(clippy::duplicate_mod)]
#[path = "common/mod.rs"]
mod common;

#[cfg(test)]
pub(crate) use common::{apply, migrate_with};
use dialect::*;
#[cfg(test)]
pub(crate) use dialect::{EARLIER, MIGRATIONS};

pub use common::SqlStore as SqliteStore;

entry_points!(SqliteStore);

/// Opens the database at `url` for [`SqliteStore::connect_with`]: a `sqlite:` URL or a file
/// path; any other database's URL is refused.
async fn open_url(url: &str, options: &StoreOptions) -> Result<SqliteStore, Error> {
    match target(url)? {
        Target::Sqlite(location) => open(location, options).await,
        Target::Postgres(_) => Err(Error::Config("a SQLite store needs a sqlite: URL or a file path".into())),
    }
}

/// Nothing to refresh: SQLite's plans for this schema do not depend on statistics.
async fn analyze(_store: &SqliteStore) -> Result<(), Error> {
    Ok(())
}

/// Opens (creating if missing) the database, applies the migrations and builds the pools.
pub(crate) async fn open(location: Location<'_>, options: &StoreOptions) -> Result<SqliteStore, Error> {
    let text = match location {
        Location::Url(text) | Location::Path(text) => text,
    };
    if text.contains(":memory:") || text.contains("mode=memory") {
        return Err(Error::Config(
            "in-memory SQLite databases are not supported: give a file path (or use pharmapay-store-memory)".into(),
        ));
    }
    let connect = match location {
        Location::Url(url) => SqliteConnectOptions::from_str(url)
            .map_err(|error| Error::Config(format!("cannot read the SQLite URL {url:?}: {error}")))?,
        Location::Path(path) => SqliteConnectOptions::new().filename(path),
    }
    .create_if_missing(true)
    .journal_mode(SqliteJournalMode::Wal)
    .synchronous(match options.sqlite_durability {
        SqliteDurability::Full => SqliteSynchronous::Full,
        SqliteDurability::Normal => SqliteSynchronous::Normal,
    })
    .foreign_keys(true)
    .busy_timeout(options.sqlite_busy_timeout);
    // No pings before acquiring (a local file does not drop connections) and no lifetime
    // limit (reopening would only throw the statement and page caches away). The writer gets a
    // 64 MiB page cache (SQLite's default is 2 MiB): imports and payments touch index pages all
    // over the file, and a larger cache cut a bulk load's time by about a tenth.
    let writer = SqlitePoolOptions::new()
        .max_connections(1)
        .acquire_timeout(options.acquire_timeout)
        .test_before_acquire(false)
        .max_lifetime(None)
        .connect_with(connect.clone().pragma("cache_size", "-65536"))
        .await?;
    common::migrate(&writer).await?;
    // Eight readers on two cores: a reader is a thread of sqlx's that sleeps while its
    // connection is idle, and with fewer of them, requests under load queue for a reader at
    // each statement. At a chain's scale, 64 connections of vendor fetches were answered about
    // 1.3 x as fast with eight as with four (BENCHMARKS.md), with 16 no faster than with four.
    let readers = options.max_connections.unwrap_or(StoreOptions::SQLITE_READERS).max(1);
    // A reader's worker thread may run up to 1,024 rows ahead of the caller (sqlx's default is
    // 50): for a long answer (the licence alerts' thousand vendors, a statement's lines) it no
    // longer stops every 50 rows to wait for the caller to take them. About a tenth off the
    // alerts at L; memory stays bounded by that many rows per read.
    let reader_options = connect.clone().pragma("query_only", "ON").row_buffer_size(1024);
    let reader =
        Reader::connect(reader_options, readers, options.acquire_timeout, crate::long_reads(options, readers)).await?;
    let store = SqliteStore::new(reader, Writer::new(writer));
    let facts = facts(&store).await?;
    info!(backend = BACKEND, file = %connect.get_filename().display(), readers, ?facts, "opened the SQLite store");
    Ok(store)
}

/// The settings that decide durability and integrity, read from the writer connection.
async fn facts(store: &SqliteStore) -> Result<Vec<(&'static str, String)>, Error> {
    let mut conn = store.writer().acquire().await?;
    let mut facts = Vec::new();
    for (name, sql) in [
        ("journal_mode", "PRAGMA journal_mode"),
        ("synchronous", "PRAGMA synchronous"),
        ("foreign_keys", "PRAGMA foreign_keys"),
        ("busy_timeout_ms", "PRAGMA busy_timeout"),
        ("sqlite_version", "SELECT sqlite_version()"),
    ] {
        let row = sqlx::query(sql).fetch_one(&mut *conn).await?;
        let value = match row.try_get::<i64, _>(0) {
            Ok(number) if name == "synchronous" => {
                ["OFF", "NORMAL", "FULL", "EXTRA"].get(number as usize).copied().unwrap_or("unknown").to_owned()
            }
            Ok(number) if name == "foreign_keys" => if number == 1 { "on" } else { "off" }.to_owned(),
            Ok(number) => number.to_string(),
            Err(_) => row.try_get::<String, _>(0)?,
        };
        facts.push((name, value));
    }
    Ok(facts)
}
