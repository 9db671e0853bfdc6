//! The SQL stores' own error type and its single mapping into the core's [`StoreError`].
//!
//! Store code returns [`Error`], so `?` works on sqlx's errors and on the domain refusals
//! (`StoreError::NotFound` and friends) alike; the public `Store` implementation converts once,
//! at the edge. The conversion is where the backends' native failures get their meaning:
//! unique violations become `Conflict` naming the [`UniqueKey`] the index guards (D5),
//! connection trouble becomes `Unavailable`, and the rest is `Backend`. What a taken key means
//! is the engine's to say (the one OwnPharmacy vendor is a rule, D14), never this file's. A local enum is needed because
//! `From<sqlx::Error> for StoreError` would implement a foreign trait for foreign types.

use pharmapay_core::{StoreError, UniqueKey};
use sqlx::error::{DatabaseError, ErrorKind};

/// How a SQL store method failed.
#[derive(Debug, thiserror::Error)]
pub(crate) enum Error {
    /// The database or the driver failed.
    #[error(transparent)]
    Sqlx(#[from] sqlx::Error),
    /// The store refused the operation in domain terms (not found, conflict, a rule).
    #[error(transparent)]
    Refused(#[from] StoreError),
    /// A stored value does not decode into a domain value (a corrupted or foreign row).
    #[error("a stored value cannot be read: {0}")]
    Corrupt(String),
    /// The database URL or the options cannot be used.
    #[error("{0}")]
    Config(String),
    /// An applied migration's text differs from the one embedded in this build.
    #[error("migration {version} ({description}) was changed after it was applied; never edit an applied migration")]
    MigrationChanged {
        /// Its version.
        version: i64,
        /// Its description.
        description: String,
    },
    /// The connection was lost while the database committed a write: whether it was kept is
    /// unknown (D48).
    #[error("the connection was lost during the commit")]
    CommitUnknown(#[source] sqlx::Error),
    /// A write found that a row it had locked a parent for moved to another parent before its
    /// own lock was granted (an invoice moved to another vendor): it runs again, like a write
    /// the database ended to break a lock cycle ([`Error::contended`]).
    #[error("{0} moved while the write waited for its lock")]
    Moved(&'static str),
    /// The database holds a migration this build does not know: the binary is older than the
    /// schema it would run on.
    #[error("the database has migration {0}, which this build does not know; run a newer pharmapay")]
    UnknownMigration(i64),
}

impl Error {
    /// A corrupt value, described.
    pub(crate) fn corrupt(what: impl Into<String>) -> Self {
        Error::Corrupt(what.into())
    }

    /// True when the connection itself failed, so that the same statement on another
    /// connection may succeed: its socket broke or closed (`Io`, `Tls`, or an answer cut
    /// short: `Protocol`), its SQLite worker thread died, or PostgreSQL ended it (class 08,
    /// connection exceptions; 57P01 to 57P03, the server shutting down or an administrator's
    /// `pg_terminate_backend`).
    pub(crate) fn connection_lost(&self) -> bool {
        match self {
            Error::Sqlx(error) => Error::lost(error),
            _ => false,
        }
    }

    fn lost(error: &sqlx::Error) -> bool {
        match error {
            sqlx::Error::Io(_) | sqlx::Error::Tls(_) | sqlx::Error::Protocol(_) | sqlx::Error::WorkerCrashed => true,
            sqlx::Error::Database(database) => database
                .code()
                .is_some_and(|code| code.starts_with("08") || matches!(&*code, "57P01" | "57P02" | "57P03")),
            _ => false,
        }
    }
}

impl Error {
    /// True when the write failed only for how it met other writes, and the same write run
    /// again may succeed: PostgreSQL ended it to break a lock cycle (40P01, deadlock detected)
    /// or for a serialisation failure (40001), or a row it locked for moved under it
    /// ([`Error::Moved`]). Its transaction is rolled back, so running it again is safe.
    pub(crate) fn contended(&self) -> bool {
        match self {
            Error::Moved(_) => true,
            Error::Sqlx(sqlx::Error::Database(database)) => {
                database.code().is_some_and(|code| matches!(&*code, "40P01" | "40001"))
            }
            _ => false,
        }
    }
}

impl Error {
    /// `self`, the error of a commit: [`Error::CommitUnknown`] when the connection was lost
    /// ([`Error::connection_lost`]), as the database may have committed before it went;
    /// otherwise unchanged, a commit that failed and kept nothing.
    pub(crate) fn of_commit(self) -> Self {
        match self {
            Error::Sqlx(error) if Error::lost(&error) => Error::CommitUnknown(error),
            other => other,
        }
    }
}

/// What each unique index protects, by index name (PostgreSQL reports it) and by
/// `table.column` (SQLite reports that instead).
const UNIQUE_INDEXES: [(&str, &str, UniqueKey); 8] = [
    ("invoices_active_number_key", "invoices.number_key", UniqueKey::InvoiceNumber),
    ("users_active_email_key", "users.email_key", UniqueKey::UserEmail),
    ("roles_name_key", "roles.name_key", UniqueKey::RoleName),
    ("policies_active_name_key", "policies.name_key", UniqueKey::PolicyName),
    ("vendors_one_own_pharmacy", "vendors.vendor_type", UniqueKey::OwnPharmacy),
    ("vendors_active_gstin", "vendors.gstin", UniqueKey::Gstin),
    ("vendor_credits_number", "vendor_credits.number_key", UniqueKey::CreditNumber),
    ("branches_active_code", "branches.code", UniqueKey::BranchCode),
];

impl From<Error> for StoreError {
    fn from(error: Error) -> Self {
        match error {
            Error::Refused(refusal) => refusal,
            Error::CommitUnknown(error) => StoreError::OutcomeUnknown(Box::new(error)),
            // Still contended after every attempt (`answer` in `common/mod.rs`): the database
            // is too busy for this write now; nothing of it was kept.
            contended if contended.contended() => StoreError::Unavailable(Box::new(contended)),
            Error::Sqlx(error) => from_sqlx(error),
            other => StoreError::Backend(Box::new(other)),
        }
    }
}

fn from_sqlx(error: sqlx::Error) -> StoreError {
    match &error {
        sqlx::Error::PoolTimedOut
        | sqlx::Error::PoolClosed
        | sqlx::Error::Io(_)
        | sqlx::Error::Tls(_)
        | sqlx::Error::WorkerCrashed => StoreError::Unavailable(Box::new(error)),
        sqlx::Error::Database(database) => {
            if database.kind() == ErrorKind::UniqueViolation
                && let Some(key) = guarded_by(database.as_ref())
            {
                return StoreError::Conflict(key);
            }
            if is_unavailable(database.as_ref()) {
                StoreError::Unavailable(Box::new(error))
            } else {
                StoreError::Backend(Box::new(error))
            }
        }
        _ => StoreError::Backend(Box::new(error)),
    }
}

fn guarded_by(error: &dyn DatabaseError) -> Option<UniqueKey> {
    if let Some(constraint) = error.constraint() {
        return UNIQUE_INDEXES.iter().find(|(name, _, _)| *name == constraint).map(|(_, _, key)| *key);
    }
    // SQLite names the columns: "UNIQUE constraint failed: invoices.number_key".
    let message = error.message();
    UNIQUE_INDEXES.iter().find(|(_, columns, _)| message.ends_with(columns)).map(|(_, _, key)| *key)
}

/// True for failures that mean "the database cannot serve now" rather than "this request is
/// wrong": SQLite's busy, locked and cannot-open results; PostgreSQL's connection exceptions
/// (class 08), insufficient resources (class 53), shutdowns (57P01 to 57P03) and a database
/// that no longer exists (3D000, when it was dropped under a running server).
fn is_unavailable(error: &dyn DatabaseError) -> bool {
    let Some(code) = error.code() else { return false };
    if error.try_downcast_ref::<sqlx::sqlite::SqliteError>().is_some() {
        // SQLite reports extended result codes; the low byte is the primary code.
        const SQLITE_BUSY: i32 = 5;
        const SQLITE_LOCKED: i32 = 6;
        const SQLITE_CANTOPEN: i32 = 14;
        return code
            .parse::<i32>()
            .is_ok_and(|code| matches!(code & 0xff, SQLITE_BUSY | SQLITE_LOCKED | SQLITE_CANTOPEN));
    }
    code.starts_with("08") || code.starts_with("53") || matches!(&*code, "57P01" | "57P02" | "57P03" | "3D000")
}

#[cfg(test)]
mod tests {
    use super::*;
    use sqlx::Connection;

    async fn violation(conn: &mut sqlx::SqliteConnection, sql: &'static str) -> StoreError {
        let error = sqlx::raw_sql(sql).execute(&mut *conn).await.expect_err("the second insert violates the index");
        StoreError::from(Error::from(error))
    }

    #[tokio::test]
    async fn sqlite_unique_violations_name_what_they_guard() {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let url = format!("sqlite:{}?mode=rwc", dir.path().join("unique.db").display());
        let mut conn = sqlx::SqliteConnection::connect(&url).await.expect("SQLite opens");
        sqlx::raw_sql(
            "CREATE TABLE invoices (number_key TEXT, is_active INTEGER); \
             CREATE UNIQUE INDEX invoices_active_number_key ON invoices (number_key) WHERE is_active; \
             CREATE TABLE vendors (vendor_type TEXT); \
             CREATE UNIQUE INDEX vendors_one_own_pharmacy ON vendors (vendor_type) WHERE vendor_type = 'OwnPharmacy'; \
             CREATE TABLE other (name TEXT UNIQUE); \
             INSERT INTO invoices VALUES ('n-1', 1); \
             INSERT INTO vendors VALUES ('OwnPharmacy'); \
             INSERT INTO other VALUES ('x');",
        )
        .execute(&mut conn)
        .await
        .expect("the schema is created");

        let invoice = violation(&mut conn, "INSERT INTO invoices VALUES ('n-1', 1)").await;
        assert!(matches!(invoice, StoreError::Conflict(UniqueKey::InvoiceNumber)), "{invoice:?}");
        let vendor = violation(&mut conn, "INSERT INTO vendors VALUES ('OwnPharmacy')").await;
        assert!(matches!(vendor, StoreError::Conflict(UniqueKey::OwnPharmacy)), "{vendor:?}");
        let unknown = violation(&mut conn, "INSERT INTO other VALUES ('x')").await;
        assert!(matches!(unknown, StoreError::Backend(_)), "an unknown index is a backend failure: {unknown:?}");
    }

    #[test]
    fn only_a_failed_connection_counts_as_lost() {
        let reset = std::io::Error::from(std::io::ErrorKind::ConnectionReset);
        assert!(Error::Sqlx(sqlx::Error::Io(reset)).connection_lost());
        assert!(Error::Sqlx(sqlx::Error::WorkerCrashed).connection_lost());
        assert!(Error::Sqlx(sqlx::Error::Protocol("an answer cut short".into())).connection_lost());
        // A full pool, a closed store, a missing row or a refusal would fail again the same way.
        assert!(!Error::Sqlx(sqlx::Error::PoolTimedOut).connection_lost());
        assert!(!Error::Sqlx(sqlx::Error::PoolClosed).connection_lost());
        assert!(!Error::Sqlx(sqlx::Error::RowNotFound).connection_lost());
        assert!(!Error::Refused(StoreError::Conflict(UniqueKey::UserEmail)).connection_lost());
    }

    #[test]
    fn pool_and_connection_failures_are_unavailable() {
        assert!(matches!(StoreError::from(Error::Sqlx(sqlx::Error::PoolTimedOut)), StoreError::Unavailable(_)));
        assert!(matches!(StoreError::from(Error::Sqlx(sqlx::Error::PoolClosed)), StoreError::Unavailable(_)));
        let refused = std::io::Error::from(std::io::ErrorKind::ConnectionRefused);
        assert!(matches!(StoreError::from(Error::Sqlx(sqlx::Error::Io(refused))), StoreError::Unavailable(_)));
        assert!(matches!(StoreError::from(Error::Sqlx(sqlx::Error::RowNotFound)), StoreError::Backend(_)));
        assert!(matches!(
            StoreError::from(Error::Refused(StoreError::Conflict(UniqueKey::UserEmail))),
            StoreError::Conflict(UniqueKey::UserEmail)
        ));
    }

    #[cfg(feature = "test-support")]
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_postgres_deadlock_is_contended_and_other_failures_are_not() {
        let Some(admin_url) = crate::testing::postgres_admin_url() else { return };
        let database = crate::testing::PgDatabase::create(&admin_url).await;
        let mut setup = sqlx::PgConnection::connect(database.url()).await.unwrap();
        sqlx::raw_sql("CREATE TABLE cycle (id INT PRIMARY KEY); INSERT INTO cycle VALUES (1), (2)")
            .execute(&mut setup)
            .await
            .unwrap();
        // Two transactions lock the two rows in opposite orders: PostgreSQL ends one of them.
        let barrier = std::sync::Arc::new(tokio::sync::Barrier::new(2));
        let sides = [(1, 2), (2, 1)].map(|(first, second)| {
            let (url, barrier) = (database.url().to_owned(), std::sync::Arc::clone(&barrier));
            tokio::spawn(async move {
                let mut conn = sqlx::PgConnection::connect(&url).await.unwrap();
                let mut db_tx = conn.begin().await.unwrap();
                let lock = "SELECT id FROM cycle WHERE id = $1 FOR UPDATE";
                sqlx::query(lock).bind(first).fetch_one(&mut *db_tx).await.unwrap();
                barrier.wait().await;
                let outcome = sqlx::query(lock).bind(second).fetch_one(&mut *db_tx).await.map(drop);
                drop(db_tx);
                outcome
            })
        });
        let mut ended = Vec::new();
        for side in sides {
            if let Err(error) = side.await.unwrap() {
                ended.push(Error::from(error));
            }
        }
        assert_eq!(ended.len(), 1, "one side of the cycle is ended: {ended:?}");
        assert!(ended[0].contended(), "{:?}", ended[0]);
        let missing = sqlx::query("SELECT * FROM no_such_table").execute(&mut setup).await.unwrap_err();
        assert!(!Error::from(missing).contended());
        assert!(!Error::Sqlx(sqlx::Error::PoolTimedOut).contended());
    }
}
