//! What the shared store body needs of SQLite: its database type, the dialect's statement texts and
//! flags, how writes begin and lock, and how ids are reserved and the schema is read.

use sqlx::{Pool, Row, Transaction};

use crate::error::Error;
use crate::schema::Earlier;
use crate::{Lock, Migration, SearchIndex, Table};

/// The database the shared store body is compiled for.
pub(super) type Db = sqlx::Sqlite;

/// The backend's name, for logs.
pub(super) const BACKEND: &str = "sqlite";

/// No row locks: a write transaction holds the whole database from its start, so a write need
/// not lock the rows it reads before it changes them (`guards::lock_vendors_of` sends nothing).
pub(super) const ROW_LOCKS: bool = false;

/// Search terms are looked up in FTS5 trigram tables (migration 4).
pub(super) const SEARCH_INDEX: SearchIndex = SearchIndex::Fts5;

/// SQLite runs a string of statements with one list of values in one call: a write's closing
/// statements (its audit entry, kept figures and idempotency claim) cost one hand-off to the
/// connection's worker thread instead of one each.
pub(super) const SCRIPTS_IN_ONE_CALL: bool = true;

/// The placeholder for statements whose values are bound in the order they appear, each once.
/// SQLite binds a numbered `$n` by looking its name up in a list, once per value, so a
/// statement with thousands of values (an import's multi-row INSERT) would cost quadratic
/// time: a plain `?` is bound by position instead.
pub(super) const IN_ORDER_PLACEHOLDER: Option<&str> = Some("?");

/// The texts of the JSON array bound as `$1`, as a subquery: a list of thousands of keys (an
/// imported file's invoice numbers, D45) in one bound value and one statement.
pub(super) const JSON_TEXTS: &str = "SELECT value FROM json_each($1)";

/// The integers of the JSON array bound as `$1`, as a subquery: a bank statement's thousands of
/// amounts (D46) in one bound value, so the days around its lines are read once.
pub(super) const JSON_INTS: &str = "SELECT value FROM json_each($1)";

/// How a read that spans statements begins: a deferred transaction takes its snapshot at its
/// first read and keeps it (WAL) until it ends.
pub(super) const READ_SNAPSHOT: &str = "BEGIN";

/// Nothing to set up for a long read: a SQLite statement runs on its connection's one thread.
pub(super) const LONG_READ_SETUP: Option<&str> = None;

/// The licence alerts' vendors (D36) as one JSON array of `[id, name, first licence number,
/// valid-until]` arrays: active, with a licence valid until before `$1`, read from the index
/// `vendors_by_licence` alone (migration 10). One value instead of a row per vendor: sqlx copies
/// every value of every row to the caller through the connection's worker thread, which for a
/// thousand vendors cost more than SQLite's own work.
pub(super) const LICENCE_HOLDERS: &str = "SELECT json_group_array(json_array(v.id, v.name, v.drug_license_number1, \
     v.drug_license_valid_until)) FROM vendors v WHERE v.is_active AND v.drug_license_valid_until < $1";

/// Whether [`LICENCE_HOLDERS`] answers one JSON value rather than a row each.
pub(super) const LICENCE_HOLDERS_PACKED: bool = true;

/// The embedded migrations, in version order.
pub(crate) const MIGRATIONS: &[Migration] = &migrations!("sqlite");

/// The texts earlier builds applied of migrations edited after their first version was
/// committed, with what brings their databases up to the landed texts (`migrations/sqlite/earlier/`).
pub(crate) const EARLIER: &[Earlier] = &[
    Earlier {
        version: 4,
        checksum: "08d1ca3fc6908c21",
        catch_up: include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/migrations/sqlite/earlier/0004_v1_catch_up.sql")),
        recounts_figures: true,
    },
    Earlier {
        version: 13,
        checksum: "3fac26508b341240",
        catch_up: include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/migrations/sqlite/earlier/0013_v1_catch_up.sql")),
        recounts_figures: false,
    },
    Earlier {
        version: 13,
        checksum: "19e01181e4f0cc18",
        catch_up: include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/migrations/sqlite/earlier/0013_v2_catch_up.sql")),
        recounts_figures: false,
    },
    Earlier {
        version: 18,
        checksum: "c6e349657fc90804",
        catch_up: include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/migrations/sqlite/earlier/0018_v1_catch_up.sql")),
        recounts_figures: false,
    },
    Earlier {
        version: 18,
        checksum: "7b99084539de2e08",
        catch_up: include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/migrations/sqlite/earlier/0018_v2_catch_up.sql")),
        recounts_figures: false,
    },
];

/// The table that records applied migrations.
pub(super) const MIGRATIONS_TABLE: &str = "CREATE TABLE IF NOT EXISTS _pharmapay_migrations ( \
     version INTEGER PRIMARY KEY, description TEXT NOT NULL, checksum TEXT NOT NULL, applied_at INTEGER NOT NULL \
     ) STRICT";

/// Begins a write transaction holding the database's write lock, outside the batches of
/// [`Writer`] (migrations and bulk loads).
pub(super) async fn begin_write(pool: &Pool<Db>) -> Result<Transaction<'static, Db>, sqlx::Error> {
    pool.begin_with("BEGIN IMMEDIATE").await
}

/// The reader connections, lent without a ping (`read_pool`).
pub(super) type Reader = crate::read_pool::ReadPool<Db>;

/// A borrowed reader connection.
pub(super) type ReadConn = crate::read_pool::ReadConn<Db>;

/// The writer connection, whose writes commit in groups (`group_commit`).
pub(super) type Writer = crate::group_commit::Writer;

/// One write of a store method: a savepoint in a batch sharing one commit.
pub(super) type WriteTx = crate::group_commit::WriteTx;

/// Begins one write of a store method.
pub(super) async fn begin_write_tx(writer: &Writer) -> Result<WriteTx, sqlx::Error> {
    writer.begin().await
}

/// Begins one write of a store method and reads the first row of `read` (binding `value` as
/// `$1`) in it, in one call to the writer connection.
pub(super) async fn begin_write_reading(
    writer: &Writer,
    read: &'static str,
    value: &'static str,
) -> Result<(WriteTx, Option<sqlx::sqlite::SqliteRow>), sqlx::Error> {
    writer.begin_reading(read, value).await
}

/// The pool behind the writer.
pub(super) fn writer_pool(writer: &Writer) -> &Pool<Db> {
    writer.pool()
}

/// Nothing to do: write transactions are serialised already.
pub(super) async fn lock(_conn: &mut sqlx::SqliteConnection, _lock: Lock) -> Result<(), sqlx::Error> {
    Ok(())
}

/// `n` fresh ids for `table`, ascending. The write lock is held, so nobody else inserts until
/// the transaction ends, and rowids continue from the largest one.
pub(super) async fn reserve_ids(conn: &mut sqlx::SqliteConnection, table: Table, n: usize) -> Result<Vec<i64>, Error> {
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
pub(super) async fn schema_definitions(
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
pub(super) async fn before_index_builds(conn: &mut sqlx::SqliteConnection) -> Result<(), sqlx::Error> {
    sqlx::query("PRAGMA threads = 2").execute(conn).await?;
    Ok(())
}

/// Refills the invoice-number search table from the invoices, as FTS5 does for a table whose
/// content lives elsewhere (after a bulk load set its triggers aside).
pub(super) async fn rebuild_search(conn: &mut sqlx::SqliteConnection) -> Result<(), sqlx::Error> {
    sqlx::query("INSERT INTO invoice_number_search (invoice_number_search) VALUES ('rebuild')").execute(conn).await?;
    Ok(())
}

/// Nothing to do: rowids continue after the seeded ids by themselves.
pub(super) async fn after_seed(_conn: &mut sqlx::SqliteConnection) -> Result<(), sqlx::Error> {
    Ok(())
}
