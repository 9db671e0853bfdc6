//! Fresh, isolated databases for the tests: a temporary SQLite file, or a uniquely named
//! PostgreSQL database that is dropped when its guard is.
//!
//! PostgreSQL tests read the server's admin URL from `PHARMAPAY_TEST_POSTGRES_URL` (for
//! example `postgres://postgres@127.0.0.1:5432/test`); when it is unset they print a line
//! saying they skip and pass without running.

// Each test binary uses a different part of this module.
#![allow(dead_code)]

pub use pharmapay_store_sqlx::testing::{PgDatabase, postgres_admin_url};
use pharmapay_store_sqlx::{PostgresStore, SqliteStore};

/// A store over a new SQLite file in a temporary directory, removed with the guard.
pub async fn fresh_sqlite() -> (SqliteStore, tempfile::TempDir) {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let path = dir.path().join("pharmapay.db");
    let store = SqliteStore::connect(path.to_str().expect("a UTF-8 temporary path")).await.expect("SQLite opens");
    (store, dir)
}

/// A store over a new PostgreSQL database, or `None` (after printing why) when no server is
/// configured.
pub async fn fresh_postgres() -> Option<(PostgresStore, PgDatabase)> {
    let admin_url = postgres_admin_url()?;
    Some(fresh_postgres_at(&admin_url).await)
}

/// A store over a new database on the server of `admin_url`.
pub async fn fresh_postgres_at(admin_url: &str) -> (PostgresStore, PgDatabase) {
    let database = PgDatabase::create(admin_url).await;
    let store = PostgresStore::connect(database.url()).await.expect("PostgreSQL store connects");
    (store, database)
}
