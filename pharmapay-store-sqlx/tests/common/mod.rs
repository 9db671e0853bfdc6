//! Fresh, isolated databases for the tests: a temporary SQLite file, or a uniquely named
//! PostgreSQL database that is dropped when its guard is.
//!
//! PostgreSQL tests read the server's admin URL from `PHARMAPAY_TEST_POSTGRES_URL` (for
//! example `postgres://postgres@127.0.0.1:5432/test`); when it is unset they print a line
//! saying they skip and pass without running.

// Each test binary uses a different part of this module.
#![allow(dead_code)]

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use pharmapay_store_sqlx::SqlxStore;
use sqlx::{AssertSqlSafe, Connection, PgConnection};

/// The variable holding the PostgreSQL admin URL.
pub const POSTGRES_URL_VAR: &str = "PHARMAPAY_TEST_POSTGRES_URL";

/// A store over a new SQLite file in a temporary directory, removed with the guard.
pub async fn fresh_sqlite() -> (SqlxStore, tempfile::TempDir) {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let path = dir.path().join("pharmapay.db");
    let store = SqlxStore::connect(path.to_str().expect("a UTF-8 temporary path")).await.expect("SQLite opens");
    (store, dir)
}

/// The PostgreSQL admin URL, or `None` after printing why the caller skips.
pub fn postgres_admin_url() -> Option<String> {
    match std::env::var(POSTGRES_URL_VAR) {
        Ok(url) if !url.trim().is_empty() => Some(url),
        _ => {
            eprintln!("skipping: {POSTGRES_URL_VAR} is not set");
            None
        }
    }
}

/// A database created for one test and dropped (with `FORCE`) when this guard is dropped.
pub struct PgDatabase {
    admin_url: String,
    name: String,
    url: String,
}

impl PgDatabase {
    /// Creates a uniquely named database on the server of `admin_url`.
    ///
    /// # Panics
    /// When the server refuses; the test cannot run.
    pub async fn create(admin_url: &str) -> Self {
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        let nanos = SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.subsec_nanos()).unwrap_or_default();
        let name =
            format!("pharmapay_test_{}_{}_{}", std::process::id(), COUNTER.fetch_add(1, Ordering::Relaxed), nanos);
        let mut admin = PgConnection::connect(admin_url).await.expect("the PostgreSQL admin URL connects");
        sqlx::query(AssertSqlSafe(format!("CREATE DATABASE {name}")))
            .execute(&mut admin)
            .await
            .expect("a test database is created");
        admin.close().await.ok();
        let url = with_database(admin_url, &name);
        Self { admin_url: admin_url.to_owned(), name, url }
    }

    /// The URL of this database.
    pub fn url(&self) -> &str {
        &self.url
    }
}

impl Drop for PgDatabase {
    fn drop(&mut self) {
        // Drop runs inside the test's runtime, which cannot be blocked on; a thread with its
        // own small runtime drops the database and is waited for.
        let admin_url = self.admin_url.clone();
        let name = self.name.clone();
        let dropped = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
            runtime.block_on(async {
                let mut admin = PgConnection::connect(&admin_url).await?;
                sqlx::query(AssertSqlSafe(format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)")))
                    .execute(&mut admin)
                    .await?;
                admin.close().await?;
                Ok::<_, Box<dyn std::error::Error + Send + Sync>>(())
            })
        })
        .join();
        match dropped {
            Ok(Ok(())) => {}
            Ok(Err(error)) => eprintln!("warning: could not drop test database {}: {error}", self.name),
            Err(_) => eprintln!("warning: dropping test database {} panicked", self.name),
        }
    }
}

/// `admin_url` with its database name replaced by `name`.
pub fn with_database(admin_url: &str, name: &str) -> String {
    let (base, query) = match admin_url.split_once('?') {
        Some((base, query)) => (base, Some(query)),
        None => (admin_url, None),
    };
    let authority_start = base.find("://").map_or(0, |index| index + 3);
    let base = match base[authority_start..].find('/') {
        Some(slash) => &base[..authority_start + slash],
        None => base,
    };
    match query {
        Some(query) => format!("{base}/{name}?{query}"),
        None => format!("{base}/{name}"),
    }
}

/// A store over a new PostgreSQL database, or `None` (after printing why) when no server is
/// configured.
pub async fn fresh_postgres() -> Option<(SqlxStore, PgDatabase)> {
    let admin_url = postgres_admin_url()?;
    Some(fresh_postgres_at(&admin_url).await)
}

/// A store over a new database on the server of `admin_url`.
pub async fn fresh_postgres_at(admin_url: &str) -> (SqlxStore, PgDatabase) {
    let database = PgDatabase::create(admin_url).await;
    let store = SqlxStore::connect(database.url()).await.expect("PostgreSQL store connects");
    (store, database)
}
