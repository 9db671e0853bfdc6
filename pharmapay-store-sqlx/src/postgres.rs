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

use sqlx::Row;
use sqlx::postgres::{PgConnectOptions, PgPoolOptions};
use tracing::{info, warn};

use crate::error::Error;
use crate::{StoreOptions, Table, Target, target};

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

mod dialect;

// The store body is shared with the sqlite backend on purpose: same file, other `Db`.
#[allow(clippy::duplicate_mod)]
#[path = "common/mod.rs"]
mod common;

#[cfg(test)]
pub(crate) use common::{apply, migrate_with};
use dialect::*;
#[cfg(test)]
pub(crate) use dialect::{EARLIER, MIGRATIONS};

pub use common::SqlStore as PostgresStore;

entry_points!(PostgresStore);

/// Connects to the database at `url` for [`PostgresStore::connect_with`]: a `postgres://` or
/// `postgresql://` URL; any other database's URL is refused.
async fn open_url(url: &str, options: &StoreOptions) -> Result<PostgresStore, Error> {
    match target(url)? {
        Target::Postgres(url) => open(url, options).await,
        Target::Sqlite(_) => Err(Error::Config("a PostgreSQL store needs a postgres:// URL".into())),
    }
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
        // A BEGIN answered within its first poll tests nothing: on a local server that answers
        // in microseconds one try in twenty or so is still waiting when dropped, so try again,
        // up to a bound that makes every try answered early vanishingly rare, until one
        // is dropped while it waits.
        let mut dropped_waiting = false;
        for _ in 0..500 {
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
