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

use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions, SqliteSynchronous};
use sqlx::{Pool, Row, Transaction};
use tracing::info;

use crate::error::Error;
use crate::{Lock, Migration, SearchIndex, SqliteDurability, StoreOptions, Table, Target, target};

/// The database the shared store body is compiled for.
type Db = sqlx::Sqlite;

/// The backend's name, for logs.
const BACKEND: &str = "sqlite";

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

// The store body is shared with the postgres backend on purpose: same file, other `Db`.
#[allow(clippy::duplicate_mod)]
#[path = "common/mod.rs"]
mod common;

pub use common::SqlStore as SqliteStore;

/// No row locks: a write transaction holds the whole database from its start, so a write need
/// not lock the rows it reads before it changes them (`guards::lock_vendors_of` sends nothing).
const ROW_LOCKS: bool = false;

/// Search terms are looked up in FTS5 trigram tables (migration 4).
const SEARCH_INDEX: SearchIndex = SearchIndex::Fts5;

/// SQLite runs a string of statements with one list of values in one call: a write's closing
/// statements (its audit entry, kept figures and idempotency claim) cost one hand-off to the
/// connection's worker thread instead of one each.
const SCRIPTS_IN_ONE_CALL: bool = true;

/// The placeholder for statements whose values are bound in the order they appear, each once.
/// SQLite binds a numbered `$n` by looking its name up in a list, once per value, so a
/// statement with thousands of values (an import's multi-row INSERT) would cost quadratic
/// time: a plain `?` is bound by position instead.
const IN_ORDER_PLACEHOLDER: Option<&str> = Some("?");

/// The texts of the JSON array bound as `$1`, as a subquery: a list of thousands of keys (an
/// imported file's invoice numbers, D45) in one bound value and one statement.
const JSON_TEXTS: &str = "SELECT value FROM json_each($1)";

/// The integers of the JSON array bound as `$1`, as a subquery: a bank statement's thousands of
/// amounts (D46) in one bound value, so the days around its lines are read once.
const JSON_INTS: &str = "SELECT value FROM json_each($1)";

/// How a read that spans statements begins: a deferred transaction takes its snapshot at its
/// first read and keeps it (WAL) until it ends.
const READ_SNAPSHOT: &str = "BEGIN";

/// Nothing to set up for a long read: a SQLite statement runs on its connection's one thread.
const LONG_READ_SETUP: Option<&str> = None;

/// The licence alerts' vendors (D36) as one JSON array of `[id, name, first licence number,
/// valid-until]` arrays: active, with a licence valid until before `$1`, read from the index
/// `vendors_by_licence` alone (migration 10). One value instead of a row per vendor: sqlx copies
/// every value of every row to the caller through the connection's worker thread, which for a
/// thousand vendors cost more than SQLite's own work.
const LICENCE_HOLDERS: &str = "SELECT json_group_array(json_array(v.id, v.name, v.drug_license_number1, \
     v.drug_license_valid_until)) FROM vendors v WHERE v.is_active AND v.drug_license_valid_until < $1";

/// Whether [`LICENCE_HOLDERS`] answers one JSON value rather than a row each.
const LICENCE_HOLDERS_PACKED: bool = true;

/// The embedded migrations, in version order.
pub(crate) const MIGRATIONS: &[Migration] = &migrations!("sqlite");

/// The table that records applied migrations.
const MIGRATIONS_TABLE: &str = "CREATE TABLE IF NOT EXISTS _pharmapay_migrations ( \
     version INTEGER PRIMARY KEY, description TEXT NOT NULL, checksum TEXT NOT NULL, applied_at INTEGER NOT NULL \
     ) STRICT";

/// A SQLite database to open.
pub(crate) enum Location<'a> {
    /// A `sqlite:` URL.
    Url(&'a str),
    /// A plain file path.
    Path(&'a str),
}

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

/// Begins a write transaction holding the database's write lock, outside the batches of
/// [`Writer`] (migrations and bulk loads).
async fn begin_write(pool: &Pool<Db>) -> Result<Transaction<'static, Db>, sqlx::Error> {
    pool.begin_with("BEGIN IMMEDIATE").await
}

/// The reader connections, lent without a ping (`read_pool`).
type Reader = crate::read_pool::ReadPool<Db>;

/// A borrowed reader connection.
type ReadConn = crate::read_pool::ReadConn<Db>;

/// The writer connection, whose writes commit in groups (`group_commit`).
type Writer = crate::group_commit::Writer;

/// One write of a store method: a savepoint in a batch sharing one commit.
type WriteTx = crate::group_commit::WriteTx;

/// Begins one write of a store method.
async fn begin_write_tx(writer: &Writer) -> Result<WriteTx, sqlx::Error> {
    writer.begin().await
}

/// Begins one write of a store method and reads the first row of `read` (binding `value` as
/// `$1`) in it, in one call to the writer connection.
async fn begin_write_reading(
    writer: &Writer,
    read: &'static str,
    value: &'static str,
) -> Result<(WriteTx, Option<sqlx::sqlite::SqliteRow>), sqlx::Error> {
    writer.begin_reading(read, value).await
}

/// The pool behind the writer.
fn writer_pool(writer: &Writer) -> &Pool<Db> {
    writer.pool()
}

/// Nothing to do: write transactions are serialised already.
async fn lock(_conn: &mut sqlx::SqliteConnection, _lock: Lock) -> Result<(), sqlx::Error> {
    Ok(())
}

/// `n` fresh ids for `table`, ascending. The write lock is held, so nobody else inserts until
/// the transaction ends, and rowids continue from the largest one.
async fn reserve_ids(conn: &mut sqlx::SqliteConnection, table: Table, n: usize) -> Result<Vec<i64>, Error> {
    let sql = match table {
        Table::Vendors => "SELECT COALESCE(MAX(id), 0) FROM vendors",
        Table::Invoices => "SELECT COALESCE(MAX(id), 0) FROM invoices",
        Table::Transactions => "SELECT COALESCE(MAX(id), 0) FROM transactions",
        Table::Credits => "SELECT COALESCE(MAX(id), 0) FROM vendor_credits",
        Table::CreditApplications => "SELECT COALESCE(MAX(id), 0) FROM credit_applications",
    };
    let largest: i64 = sqlx::query(sql).fetch_one(&mut *conn).await?.try_get(0)?;
    let n = i64::try_from(n).map_err(|_| Error::corrupt("too many rows for one import"))?;
    Ok((largest + 1..=largest + n).collect())
}

/// The kind (`index` or `trigger`), name and SQL of those of `names` the database has.
async fn schema_definitions(
    conn: &mut sqlx::SqliteConnection,
    names: &[&str],
) -> Result<Vec<(String, String, String)>, sqlx::Error> {
    let names = serde_json::to_string(names).unwrap_or_else(|_| "[]".to_owned());
    let rows = sqlx::query(
        "SELECT type, name, sql FROM sqlite_master WHERE type IN ('index', 'trigger') AND sql IS NOT NULL \
         AND name IN (SELECT value FROM json_each($1)) ORDER BY type, name",
    )
    .bind(names)
    .fetch_all(&mut *conn)
    .await?;
    rows.iter().map(|row| Ok((row.try_get(0)?, row.try_get(1)?, row.try_get(2)?))).collect()
}

/// Lets SQLite sort with a helper thread while it builds indexes on this connection (about a
/// third faster for the payments' date index at a chain's scale).
async fn before_index_builds(conn: &mut sqlx::SqliteConnection) -> Result<(), sqlx::Error> {
    sqlx::query("PRAGMA threads = 2").execute(conn).await?;
    Ok(())
}

/// Refills the invoice-number search table from the invoices, as FTS5 does for a table whose
/// content lives elsewhere (after a bulk load set its triggers aside).
async fn rebuild_search(conn: &mut sqlx::SqliteConnection) -> Result<(), sqlx::Error> {
    sqlx::query("INSERT INTO invoice_number_search (invoice_number_search) VALUES ('rebuild')").execute(conn).await?;
    Ok(())
}

/// Nothing to do: rowids continue after the seeded ids by themselves.
async fn after_seed(_conn: &mut sqlx::SqliteConnection) -> Result<(), sqlx::Error> {
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
