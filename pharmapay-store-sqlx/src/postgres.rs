//! The PostgreSQL backend: connection settings, locking and the migration list.
//!
//! The store body is `common/`, compiled here over [`sqlx::Postgres`]. What this module
//! decides:
//! - Write transactions run at READ COMMITTED. Rows a write checks and then relies on are
//!   locked with `FOR UPDATE` (the row it changes) or `FOR SHARE` (a parent that must stay
//!   active), always in one order (D48): the time zone setting shared, payment references'
//!   advisory locks, payments, then vendors in id order, then their invoices in id order, then
//!   the figure rows; so writers never wait in a cycle. The vendors of a payment's invoices are
//!   read and locked before the invoices (`guards::lock_vendors_of`), and a write whose
//!   invoice moved to another vendor in between runs again. A write PostgreSQL still ends to
//!   break a lock cycle (40P01) or for a serialisation failure (40001) runs again too, a few
//!   times, inside the store (`answer` in `common/mod.rs`). Paid totals change with
//!   `paid = paid + $n`, atomic under concurrency.
//! - Rules that span rows no single lock covers take a transaction-scoped advisory lock:
//!   onboarding (exactly one wins) and changes that may remove the last admin (D18).
//!   Migrations take one too, so several servers starting together apply each migration once.
//! - Uniqueness among active rows is finally decided by the partial unique indexes; their
//!   violations (SQLSTATE 23505) become `Conflict` by index name (D5).
//! - Identity sequences are moved past the seeded ids, and imports reserve their ids with
//!   `nextval`, so ids follow the input order.

use std::str::FromStr;

use sqlx::postgres::{PgConnectOptions, PgPoolOptions};
use sqlx::{Pool, Row, Transaction};
use tracing::{info, warn};

use crate::error::Error;
use crate::{Lock, Migration, SearchIndex, StoreOptions, Table, Target, target};

/// The database the shared store body is compiled for.
type Db = sqlx::Postgres;

/// The backend's name, for logs.
const BACKEND: &str = "postgres";

macro_rules! for_update {
    () => {
        " FOR UPDATE"
    };
}
/// How text compares in byte order, as Rust compares strings, where a column's own collation
/// may differ.
macro_rules! byte_order {
    () => {
        " COLLATE \"C\""
    };
}
macro_rules! for_share {
    () => {
        " FOR SHARE"
    };
}

// The store body is shared with the sqlite backend on purpose: same file, other `Db`.
#[allow(clippy::duplicate_mod)]
#[path = "common/mod.rs"]
mod common;

pub use common::SqlStore as PostgresStore;

/// Writes lock the rows they rely on, in one order (`for_update!`, `guards::lock_vendors_of`).
const ROW_LOCKS: bool = true;

/// Search terms are looked up in `pg_trgm` GIN indexes (migration 4), which serve `LIKE`.
const SEARCH_INDEX: SearchIndex = SearchIndex::Trigram;

/// PostgreSQL prepares one statement at a time: a script's statements are sent one by one.
const SCRIPTS_IN_ONE_CALL: bool = false;

/// PostgreSQL binds `$n` by position already: no other placeholder is needed.
const IN_ORDER_PLACEHOLDER: Option<&str> = None;

/// The texts of the JSON array bound as `$1`, as a subquery: a list of thousands of keys (an
/// imported file's invoice numbers, D45) in one bound value and one statement.
const JSON_TEXTS: &str = "SELECT json_array_elements_text($1::json)";

/// The integers of the JSON array bound as `$1`, as a subquery: a bank statement's thousands of
/// amounts (D46) in one bound value, so the days around its lines are read once.
const JSON_INTS: &str = "SELECT json_array_elements_text($1::json)::bigint";

/// How a read that spans statements begins: one snapshot for all of them.
const READ_SNAPSHOT: &str = "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY";

/// What a long read (a chain's aging, a vendor's statement) runs first in its snapshot: no
/// parallel workers (D48). PostgreSQL would otherwise give one such query every core it may
/// (two workers by default): the few long reads at once are bounded to leave the others cores
/// to be answered on, which parallel workers took back (other users' profile fetches took four
/// times as long beside agings at a chain's scale on two cores).
const LONG_READ_SETUP: Option<&str> = Some("SET LOCAL max_parallel_workers_per_gather = 0");

/// The licence alerts' vendors (D36), a row each: active, with a licence valid until before
/// `$1`, read along the index `vendors_by_licence`. Packed into one JSON value as on SQLite,
/// the list took a quarter longer here: sqlx reads PostgreSQL's rows from its buffer without a
/// thread between, and `json_agg` costs more than it saves.
const LICENCE_HOLDERS: &str = "SELECT v.id, v.name, v.drug_license_number1, v.drug_license_valid_until \
     FROM vendors v WHERE v.is_active AND v.drug_license_valid_until < $1";

/// Whether [`LICENCE_HOLDERS`] answers one JSON value rather than a row each.
const LICENCE_HOLDERS_PACKED: bool = false;

/// The embedded migrations, in version order.
pub(crate) const MIGRATIONS: &[Migration] = &migrations!("postgres");

/// The table that records applied migrations, created when missing. Written as a check rather
/// than `CREATE TABLE IF NOT EXISTS`, whose notice for an existing table ("already exists,
/// skipping") sqlx logs at `info`: once for each migration at every start.
const MIGRATIONS_TABLE: &str = "DO $$ BEGIN IF to_regclass('_pharmapay_migrations') IS NULL THEN \
     CREATE TABLE _pharmapay_migrations (version BIGINT PRIMARY KEY, description TEXT NOT NULL, \
     checksum TEXT NOT NULL, applied_at BIGINT NOT NULL); END IF; END $$";

/// Connects to the database at `url` for [`PostgresStore::connect_with`]: a `postgres://` or
/// `postgresql://` URL; any other database's URL is refused.
async fn open_url(url: &str, options: &StoreOptions) -> Result<PostgresStore, Error> {
    match target(url)? {
        Target::Postgres(url) => open(url, options).await,
        Target::Sqlite(_) => Err(Error::Config("a PostgreSQL store needs a postgres:// URL".into())),
    }
}

/// Begins a write transaction (READ COMMITTED, the server's default).
async fn begin_write(pool: &Pool<Db>) -> Result<Transaction<'static, Db>, sqlx::Error> {
    pool.begin().await
}

/// Writes take connections from the one pool; each commits by itself.
type Writer = Pool<Db>;

/// The reader connections (`read_pool`), lent without a ping.
type Reader = crate::read_pool::ReadPool<Db>;

/// A borrowed reader connection.
type ReadConn = crate::read_pool::ReadConn<Db>;

/// One write of a store method: a transaction of its own, whose commit, once asked for, runs to
/// its end even when the caller stops waiting.
///
/// A server drops a request's future when its client disconnects. Dropped while sqlx awaited
/// `COMMIT`, the transaction still counted as open, so sqlx sent a `ROLLBACK` after the commit
/// had gone through, and PostgreSQL's "there is no transaction in progress" came back as a
/// warning in the log. Committed on a task of its own, the transaction is closed when the
/// commit ends, whoever still waits for it. A write dropped before its commit is rolled back,
/// as any unfinished transaction is.
struct WriteTx(Transaction<'static, Db>);

impl WriteTx {
    /// Commits the transaction on a task of its own and waits for it. A commit whose connection
    /// was lost before PostgreSQL answered may have gone through or not: it fails with
    /// [`Error::CommitUnknown`], never as a write known not to be kept (D48).
    async fn commit(self) -> Result<(), Error> {
        crate::to_the_end(self.0.commit()).await.map_err(|error| Error::Sqlx(error).of_commit())
    }

    /// Rolls the transaction back (dropping it would too, a little later).
    async fn rollback(self) -> Result<(), sqlx::Error> {
        self.0.rollback().await
    }
}

impl std::ops::Deref for WriteTx {
    type Target = sqlx::PgConnection;

    fn deref(&self) -> &Self::Target {
        &self.0
    }
}

impl std::ops::DerefMut for WriteTx {
    fn deref_mut(&mut self) -> &mut Self::Target {
        &mut self.0
    }
}

/// Begins one write of a store method, on a task of its own.
///
/// sqlx counts a transaction only once `BEGIN` has answered, and queues a rollback only for a
/// counted one. A caller dropped while `BEGIN` ran (a client that went away) handed its
/// connection back to the pool inside a transaction nobody ended; the next write on it then
/// met "there is already a transaction in progress", and its commit ended both. On a task of
/// its own, `BEGIN` finishes whoever waits, and a transaction nobody took is dropped there,
/// counted, and rolled back as usual.
async fn begin_write_tx(writer: &Writer) -> Result<WriteTx, sqlx::Error> {
    let pool = writer.clone();
    crate::to_the_end(async move { begin_write(&pool).await }).await.map(WriteTx)
}

/// Begins one write of a store method and reads the first row of `read` (binding `value` as
/// `$1`) in it.
async fn begin_write_reading(
    writer: &Writer,
    read: &'static str,
    value: &'static str,
) -> Result<(WriteTx, Option<sqlx::postgres::PgRow>), sqlx::Error> {
    let mut db_tx = begin_write_tx(writer).await?;
    let row = sqlx::query(read).bind(value).fetch_optional(&mut *db_tx).await?;
    Ok((db_tx, row))
}

/// The pool behind the writer.
fn writer_pool(writer: &Writer) -> &Pool<Db> {
    writer
}

/// Takes `lock` until the transaction ends; a single reference's lock comes with
/// [`Lock::AllReferences`] held shared, taken first.
async fn lock(conn: &mut sqlx::PgConnection, lock: Lock) -> Result<(), sqlx::Error> {
    if let Lock::Reference(_) = lock {
        sqlx::query("SELECT pg_advisory_xact_lock_shared($1)")
            .bind(Lock::AllReferences.key())
            .execute(&mut *conn)
            .await?;
    }
    sqlx::query("SELECT pg_advisory_xact_lock($1)").bind(lock.key()).execute(&mut *conn).await?;
    Ok(())
}

/// `n` fresh ids for `table` from its identity sequence, ascending.
async fn reserve_ids(conn: &mut sqlx::PgConnection, table: Table, n: usize) -> Result<Vec<i64>, Error> {
    let sql = match table {
        Table::Vendors => "SELECT nextval(pg_get_serial_sequence('vendors', 'id')) FROM generate_series(1, $1)",
        Table::Invoices => "SELECT nextval(pg_get_serial_sequence('invoices', 'id')) FROM generate_series(1, $1)",
        Table::Transactions => {
            "SELECT nextval(pg_get_serial_sequence('transactions', 'id')) FROM generate_series(1, $1)"
        }
        Table::Credits => "SELECT nextval(pg_get_serial_sequence('vendor_credits', 'id')) FROM generate_series(1, $1)",
        Table::CreditApplications => {
            "SELECT nextval(pg_get_serial_sequence('credit_applications', 'id')) FROM generate_series(1, $1)"
        }
    };
    let n = i64::try_from(n).map_err(|_| Error::corrupt("too many rows for one import"))?;
    let rows = sqlx::query(sql).bind(n).fetch_all(&mut *conn).await?;
    let mut ids = rows.iter().map(|row| row.try_get::<i64, _>(0)).collect::<Result<Vec<_>, _>>()?;
    ids.sort_unstable();
    Ok(ids)
}

/// The kind (always `index`: the search is an index here), name and definition of those of
/// `names` the current schema has.
async fn schema_definitions(
    conn: &mut sqlx::PgConnection,
    names: &[&str],
) -> Result<Vec<(String, String, String)>, sqlx::Error> {
    let names: Vec<String> = names.iter().map(|name| (*name).to_owned()).collect();
    let rows = sqlx::query(
        "SELECT 'index' AS kind, indexname, indexdef FROM pg_indexes \
         WHERE schemaname = current_schema() AND indexname = ANY($1) ORDER BY indexname",
    )
    .bind(names)
    .fetch_all(&mut *conn)
    .await?;
    rows.iter().map(|row| Ok((row.try_get(0)?, row.try_get(1)?, row.try_get(2)?))).collect()
}

/// Gives this transaction's index builds more sorting memory than the server's default.
async fn before_index_builds(conn: &mut sqlx::PgConnection) -> Result<(), sqlx::Error> {
    sqlx::query("SET LOCAL maintenance_work_mem = '256MB'").execute(conn).await?;
    Ok(())
}

/// Nothing to refill: the trigram index is built with the other indexes.
async fn rebuild_search(_conn: &mut sqlx::PgConnection) -> Result<(), sqlx::Error> {
    Ok(())
}

/// Moves the identity sequences of the seeded tables past the fixed seed ids (D27).
async fn after_seed(conn: &mut sqlx::PgConnection) -> Result<(), sqlx::Error> {
    for sql in [
        "SELECT setval(pg_get_serial_sequence('roles', 'id'), (SELECT MAX(id) FROM roles))",
        "SELECT setval(pg_get_serial_sequence('permissions', 'id'), (SELECT MAX(id) FROM permissions))",
        "SELECT setval(pg_get_serial_sequence('policies', 'id'), (SELECT MAX(id) FROM policies))",
    ] {
        sqlx::query(sql).execute(&mut *conn).await?;
    }
    Ok(())
}

/// Connects, applies the migrations and builds the pool.
pub(crate) async fn open(url: &str, options: &StoreOptions) -> Result<PostgresStore, Error> {
    let connect = PgConnectOptions::from_str(url)
        .map_err(|error| Error::Config(format!("cannot read the PostgreSQL URL: {error}")))?
        .application_name("pharmapay");
    let max_connections = options.max_connections.unwrap_or(StoreOptions::POSTGRES_CONNECTIONS).max(1);
    // The acquire timeout also bounds connecting, so an unreachable server is reported as
    // unavailable after it instead of hanging. Writes use sqlx's pool, which pings a connection
    // before use: a round trip, but a connection the server dropped (a restart) is noticed
    // before a write goes to it. Reads use the store's own reader connections, lent without a
    // ping; a read that meets a dropped one runs again on a checked one (`read_pool`).
    let writer = PgPoolOptions::new()
        .max_connections(max_connections)
        .acquire_timeout(options.acquire_timeout)
        .connect_with(connect.clone())
        .await?;
    common::migrate(&writer).await?;
    let reader = Reader::connect(
        connect.clone(),
        max_connections,
        options.acquire_timeout,
        crate::long_reads(options, max_connections),
    )
    .await?;
    let store = PostgresStore::new(reader, writer);
    let facts = facts(&store).await?;
    info!(
        backend = BACKEND,
        host = connect.get_host(),
        port = connect.get_port(),
        database = connect.get_database().unwrap_or_default(),
        max_connections,
        ?facts,
        "connected to the PostgreSQL store"
    );
    if facts.iter().any(|(name, value)| *name == "autovacuum" && value == "off") {
        warn!(
            "autovacuum is off on this PostgreSQL server: every payment updates its invoice, and without \
             vacuuming the dead row versions pile up and slow every list; turn it on, or run VACUUM (ANALYZE) regularly"
        );
    }
    Ok(store)
}

/// Refreshes the planner's statistics and the visibility map of the store's tables (after bulk
/// loads): every table of the schema the store's migrations write to. A `VACUUM` that names no
/// table takes the shared catalogues too, and a role that owns only its database may not vacuum
/// the shared ones (`pg_authid`, `pg_database`...): each run warned so, once for each of 48
/// catalogues and their indexes, to a user who did nothing wrong.
/// `VACUUM` cannot run inside a transaction, so it goes to the pool as a statement.
async fn analyze(store: &PostgresStore) -> Result<(), Error> {
    let tables: Vec<String> = sqlx::query_scalar(
        "SELECT format('%I.%I', n.nspname, c.relname) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace \
         WHERE c.relkind = 'r' AND n.nspname = current_schema() ORDER BY 1",
    )
    .fetch_all(store.writer())
    .await?;
    if tables.is_empty() {
        return Ok(());
    }
    // The names come from the catalogue, each quoted by `format('%I')`.
    let vacuum = format!("VACUUM (ANALYZE) {}", tables.join(", "));
    sqlx::raw_sql(sqlx::AssertSqlSafe(vacuum)).execute(store.writer()).await?;
    Ok(())
}

/// The server's version, the settings write transactions rely on, and whether autovacuum runs
/// (every payment leaves a dead version of its invoice's row behind).
async fn facts(store: &PostgresStore) -> Result<Vec<(&'static str, String)>, Error> {
    let row = sqlx::query(
        "SELECT current_setting('server_version') AS server_version, \
         current_setting('default_transaction_isolation') AS isolation, \
         current_setting('synchronous_commit') AS synchronous_commit, \
         current_setting('autovacuum') AS autovacuum",
    )
    .fetch_one(store.writer())
    .await?;
    Ok(vec![
        ("server_version", row.try_get("server_version")?),
        ("default_transaction_isolation", row.try_get("isolation")?),
        ("synchronous_commit", row.try_get("synchronous_commit")?),
        ("autovacuum", row.try_get("autovacuum")?),
    ])
}

#[cfg(all(test, feature = "test-support"))]
mod tests {
    use std::future::Future;
    use std::ops::DerefMut;
    use std::task::Poll;
    use std::time::Duration;

    use sqlx::postgres::PgPoolOptions;

    use super::begin_write_tx;
    use crate::testing::{Notices, PgDatabase, postgres_admin_url};

    /// Whether the connection runs its statements outside any transaction begun before: sent
    /// as a simple query, a statement outside a transaction starts its own, so `now()` is its
    /// own start; in a transaction begun earlier, `now()` is that transaction's start.
    async fn outside_a_transaction(conn: &mut sqlx::PgConnection) -> bool {
        use sqlx::Row;
        let row = sqlx::raw_sql("SELECT now() = statement_timestamp()").fetch_one(conn).await.unwrap();
        row.get(0)
    }

    /// A database of its own on the test server, or `None` (after saying why) when there is none.
    async fn fresh_database() -> Option<PgDatabase> {
        Some(PgDatabase::create(&postgres_admin_url()?).await)
    }

    /// Fails with `message` unless `conn` runs outside any transaction, then gives it back.
    async fn assert_outside_a_transaction(mut conn: impl DerefMut<Target = sqlx::PgConnection>, message: &str) {
        assert!(outside_a_transaction(&mut conn).await, "{message}");
    }

    /// Polls `future` once and drops it: a caller that stops waiting, as a server does when the
    /// client of a request disconnects. Answers whether it was still waiting.
    async fn poll_once_and_drop<F: Future>(future: F) -> bool {
        let mut future = Box::pin(future);
        std::future::poll_fn(|cx| Poll::Ready(future.as_mut().poll(cx).is_pending())).await
    }

    #[tokio::test]
    async fn a_read_snapshot_dropped_while_it_begins_leaves_no_transaction_on_the_next_read() {
        let Some(database) = fresh_database().await else { return };
        let options: sqlx::postgres::PgConnectOptions = database.url().parse().unwrap();
        // One connection, so the second borrower gets the first one's if it is kept.
        let pool = crate::read_pool::ReadPool::<sqlx::Postgres>::connect(
            options,
            1,
            Duration::from_secs(10),
            (1, Duration::from_secs(10)),
        )
        .await
        .unwrap();
        // A BEGIN answered within its first poll (a busy machine can let that happen) tests
        // nothing: try again until one is dropped while it waits.
        let mut dropped_waiting = false;
        for _ in 0..20 {
            let mut reader = pool.acquire().await.unwrap();
            assert!(outside_a_transaction(&mut reader).await);
            if poll_once_and_drop(reader.begin_snapshot(super::READ_SNAPSHOT)).await {
                dropped_waiting = true;
                break;
            }
        }
        assert!(dropped_waiting, "BEGIN waits for the database");
        assert_outside_a_transaction(pool.acquire().await.unwrap(), "the next read runs in no transaction left open")
            .await;
        pool.close().await;
    }

    #[tokio::test]
    async fn a_write_dropped_while_it_begins_leaves_no_transaction_on_the_next_write() {
        let Some(database) = fresh_database().await else { return };
        // One connection, lent without a ping, so that the first poll sends BEGIN.
        let pool =
            PgPoolOptions::new().max_connections(1).test_before_acquire(false).connect(database.url()).await.unwrap();
        let waited = poll_once_and_drop(begin_write_tx(&pool)).await;
        assert!(waited, "BEGIN waits for the database");
        assert_outside_a_transaction(
            pool.acquire().await.unwrap(),
            "the connection came back with no transaction open",
        )
        .await;
        pool.close().await;
    }

    #[tokio::test]
    async fn opening_the_store_warns_when_autovacuum_is_off_and_only_then() {
        let Some(database) = fresh_database().await else { return };
        let mut admin = <sqlx::PgConnection as sqlx::Connection>::connect(database.url()).await.unwrap();
        let setting: String =
            sqlx::query_scalar("SELECT current_setting('autovacuum')").fetch_one(&mut admin).await.unwrap();
        let logged = Notices::default();
        let store = {
            let _logged = tracing::dispatcher::set_default(&tracing::Dispatch::new(logged.clone()));
            super::open(database.url(), &crate::StoreOptions::default()).await.unwrap()
        };
        let warnings = logged.warnings();
        let warned = warnings.iter().any(|warning| warning.contains("autovacuum is off"));
        assert_eq!(warned, setting == "off", "autovacuum = {setting}; warnings: {warnings:?}");
        store.close().await;
    }

    #[tokio::test]
    async fn a_commit_whose_caller_stops_waiting_still_ends_its_transaction() {
        let Some(database) = fresh_database().await else { return };
        let notices = Notices::default();
        let _logged = tracing::dispatcher::set_default(&tracing::Dispatch::new(notices.clone()));
        // One connection: the read below gets the one the write used, once the write let go of it.
        let pool = PgPoolOptions::new().max_connections(1).connect(database.url()).await.unwrap();
        sqlx::query("CREATE TABLE kept (n INT)").execute(&pool).await.unwrap();

        let mut db_tx = begin_write_tx(&pool).await.unwrap();
        sqlx::query("INSERT INTO kept VALUES (1)").execute(&mut *db_tx).await.unwrap();
        // The caller asks for the commit and stops waiting.
        let waited = poll_once_and_drop(db_tx.commit()).await;
        assert!(waited, "the commit waits for the database");

        let kept: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM kept").fetch_one(&pool).await.unwrap();
        assert_eq!(kept, 1, "the write was committed");
        let notices = notices.notices();
        assert!(notices.is_empty(), "no ROLLBACK followed the COMMIT: {notices:?}");
        pool.close().await;
    }
}
