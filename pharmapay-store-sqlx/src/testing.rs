//! Test support (feature `test-support`): fresh, isolated PostgreSQL databases, and a
//! subscriber that collects what PostgreSQL and the store warn about.
//!
//! Tests that need PostgreSQL read the server's admin URL from `PHARMAPAY_TEST_POSTGRES_URL`
//! (for example `postgres://postgres@127.0.0.1:5432/test`). [`PgDatabase::create`] makes a
//! uniquely named database there, and dropping the guard drops the database again, so tests
//! never share state and leave nothing behind. When the variable is unset,
//! [`postgres_admin_url`] prints that the test skips.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{SystemTime, UNIX_EPOCH};

use sqlx::{AssertSqlSafe, Connection, PgConnection};
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Metadata};

/// The variable holding the PostgreSQL admin URL.
pub const POSTGRES_URL_VAR: &str = "PHARMAPAY_TEST_POSTGRES_URL";

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

/// A database created for one test and dropped (with `FORCE`) when this guard is dropped,
/// with the login role that owns it when it was made for one.
pub struct PgDatabase {
    admin_url: String,
    name: String,
    url: String,
    owner: Option<String>,
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
        Self { admin_url: admin_url.to_owned(), name, url, owner: None }
    }

    /// Creates a uniquely named database owned by a new login role, which owns nothing else:
    /// the role the README asks for. [`url`](Self::url) connects as that role.
    ///
    /// # Panics
    /// When the server refuses; the test cannot run.
    pub async fn create_with_owner(admin_url: &str) -> Self {
        let mut database = Self::create(admin_url).await;
        let owner = format!("{}_owner", database.name);
        let password = "owner-password";
        let mut admin = PgConnection::connect(admin_url).await.expect("the PostgreSQL admin URL connects");
        for sql in [
            format!("CREATE ROLE {owner} LOGIN PASSWORD '{password}'"),
            format!("ALTER DATABASE {} OWNER TO {owner}", database.name),
        ] {
            sqlx::query(AssertSqlSafe(sql)).execute(&mut admin).await.expect("the owner role is made");
        }
        admin.close().await.ok();
        let (scheme, rest) = database.url.split_once("://").expect("a URL with a scheme");
        let host = rest.split_once('@').map_or(rest, |(_, host)| host);
        database.url = format!("{scheme}://{owner}:{password}@{host}");
        database.owner = Some(owner);
        database
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
        let owner = self.owner.clone();
        let dropped = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
            runtime.block_on(async {
                let mut admin = PgConnection::connect(&admin_url).await?;
                sqlx::query(AssertSqlSafe(format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)")))
                    .execute(&mut admin)
                    .await?;
                if let Some(owner) = owner {
                    sqlx::query(AssertSqlSafe(format!("DROP ROLE IF EXISTS {owner}"))).execute(&mut admin).await?;
                }
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

/// A `tracing` subscriber that keeps the notices PostgreSQL sent, as sqlx logs them (target
/// `sqlx::postgres::notice`), and the warnings this crate logs; set it as the default for the
/// part of a test it watches (`tracing::dispatcher::set_default`).
#[derive(Clone, Default)]
pub struct Notices(Arc<Mutex<Vec<String>>>, Arc<Mutex<Vec<String>>>);

impl Notices {
    /// The messages of PostgreSQL's notices so far.
    pub fn notices(&self) -> Vec<String> {
        self.0.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).clone()
    }

    /// The messages of this crate's warnings so far.
    pub fn warnings(&self) -> Vec<String> {
        self.1.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).clone()
    }
}

struct Message<'a>(&'a mut String);

impl Visit for Message<'_> {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        if field.name() == "message" {
            *self.0 = format!("{value:?}");
        }
    }
}

impl tracing::Subscriber for Notices {
    fn enabled(&self, metadata: &Metadata<'_>) -> bool {
        metadata.target() == "sqlx::postgres::notice"
            || (metadata.target().starts_with(module_path!().split("::").next().unwrap_or_default())
                && *metadata.level() == tracing::Level::WARN)
    }
    fn new_span(&self, _: &Attributes<'_>) -> Id {
        Id::from_u64(1)
    }
    fn record(&self, _: &Id, _: &Record<'_>) {}
    fn record_follows_from(&self, _: &Id, _: &Id) {}
    fn event(&self, event: &Event<'_>) {
        let mut message = String::new();
        event.record(&mut Message(&mut message));
        let kept = if event.metadata().target() == "sqlx::postgres::notice" { &self.0 } else { &self.1 };
        kept.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).push(message);
    }
    fn enter(&self, _: &Id) {}
    fn exit(&self, _: &Id) {}
}
