//! SQL stores for the pharmapay engine: SQLite and PostgreSQL through sqlx.
//!
//! [`SqlxStore`] implements [`pharmapay_core::Store`] over either database, picked from the URL
//! given to [`SqlxStore::connect`]: `sqlite:`, `sqlite://path` or a plain file path opens (and
//! creates) a SQLite file; `postgres://` or `postgresql://` connects to PostgreSQL. Connecting
//! applies the embedded migrations (`migrations/<backend>/`) and the seed data of D27.
//!
//! # Layout
//! - `common.rs` holds the store itself, written once in SQL both databases understand: every
//!   `Store` method is one database transaction that checks and writes what the contract says.
//!   It is compiled twice, as `sqlite::common` and `postgres::common`, each time over that
//!   backend's `Db` type and dialect macros.
//! - `sqlite.rs` and `postgres.rs` hold what differs: connection settings, how a write
//!   transaction starts and locks, identity sequences, and the migration list.
//! - `error.rs` maps sqlx's errors into [`StoreError`] once.
//!
//! # Guarantees and choices
//! - Money is stored exactly, as integers of ten-thousandths (D1); sums are integer sums.
//!   Each invoice keeps its paid total in its row, updated in the same transaction as every
//!   payment change, so figures never sum payments on read.
//! - Cross-row rules (active parents, unique numbers among active rows, the last admin, one
//!   OwnPharmacy, one onboarding, login counting, idempotency claims) are checked inside the
//!   method's own transaction. SQLite serialises writers: each write transaction starts with
//!   `BEGIN IMMEDIATE` on the single writer connection. PostgreSQL runs at READ COMMITTED with
//!   row locks (`FOR UPDATE`, `FOR SHARE`) taken in one fixed order (payments, then invoices,
//!   then vendors), atomic `paid = paid + $n` updates and transaction-scoped advisory locks for
//!   onboarding and the last-admin rule; partial unique indexes settle the remaining races and
//!   their violations become `Conflict` (D5).
//! - SQLite runs in WAL mode with `synchronous = FULL`: every commit is on disk before the
//!   store answers, so an acknowledged payment survives a power cut. The measured cost is about
//!   a third of the write rate (roughly 0.9 to 1.5 thousand payments a second instead of 1.8 to
//!   2.2 thousand with NORMAL, which may lose the last commits on power loss), far above what a
//!   pharmacy chain records. [`StoreOptions::sqlite_durability`] can choose NORMAL.
//! - Lists, sorts, pages, filters and dashboard figures run in SQL over indexes made for them;
//!   nothing loads a table into memory. A page and its total count are one statement, so they
//!   always agree.
//!
//! # Performance at a chain's scale
//! Measured on a project machine (2 vCPU) with 10,000 vendors, 1,000,000 invoices and
//! 3,000,000 payments loaded through the imports, SQLite, release build:
//! - pages of 15 by invoice date, due date or pending amount: 12 to 45 ms (mostly the total
//!   count); one invoice or one vendor with its totals: 0.1 to 0.2 ms; top vendors and the
//!   vendor list by balance: 80 to 95 ms; dashboard summary: about 0.2 s; twelve monthly
//!   totals: about 90 ms; an export batch of 1,000: about 5 ms.
//! - Known slow spots: a status filter counts every matching invoice through the due-date index
//!   (about 0.9 s for `Overdue` over a million invoices), and search is a substring match that
//!   scans (about 0.45 s). Both are exact; faster versions need a covering index that payments
//!   would have to update, or a trigram index.
//! - Bulk loads: about 20 to 35 s for the million invoices, and for the three million payments
//!   about 100 s in batches of 100,000 or about 220 s in batches of 10,000. Each payment batch
//!   updates the paid totals of invoices spread over the whole table, so every commit rewrites
//!   most pages of the invoice indexes: fewer, larger batches are much cheaper.
//!   PostgreSQL loads payments about half as fast (each paid-total change is a non-HOT update
//!   that touches every invoice index); call [`SqlxStore::analyze`] after a bulk load.

mod error;
mod postgres;
mod sqlite;
#[cfg(feature = "test-support")]
pub mod testing;

use std::time::Duration;

use pharmapay_core::access::Permission;
use pharmapay_core::auth::Secret;
use pharmapay_core::dashboard::{PeriodTotal, Summary, TopVendor};
use pharmapay_core::domain::{
    AuditEntry, AuditQuery, Invoice, InvoiceDetail, InvoiceFilter, InvoiceQuery, NewAuditEntry, NewInvoice, NewPolicy,
    NewRole, NewTransaction, NewVendor, Policy, ProfileUpdate, Role, Setting, Transaction, TransactionFilter,
    TransactionQuery, User, UserUpdate, Vendor, VendorFilter, VendorQuery,
};
use pharmapay_core::idempotency::{ClaimOutcome, IdempotencyClaim, IdempotencyKey};
use pharmapay_core::ids::{InvoiceId, PermissionId, PolicyId, RoleId, TransactionId, UserId, VendorId};
use pharmapay_core::jiff::{SignedDuration, Timestamp};
use pharmapay_core::store::WriteContext;
use pharmapay_core::store::{
    Credentials, ImportedInvoice, ImportedTransaction, ImportedVendor, LoginGate, NewUserRecord, SessionState,
    StoreResult,
};
use pharmapay_core::{Page, Store, StoreError};

/// Pool sizes, timeouts and durability; [`StoreOptions::default`] is what a server wants.
#[derive(Clone, Debug)]
pub struct StoreOptions {
    /// Most connections: the PostgreSQL pool's size, or the number of SQLite reader
    /// connections (SQLite always has exactly one writer connection besides them).
    /// `None` means 10 for PostgreSQL (more than two cores can keep busy, fewer than the
    /// server's default limit of 100) and 4 SQLite readers.
    pub max_connections: Option<u32>,
    /// How long a call waits for a connection before failing with
    /// [`StoreError::Unavailable`]; it also bounds connecting, so an unreachable database is
    /// reported after this long instead of hanging. Default: 5 seconds.
    pub acquire_timeout: Duration,
    /// How long SQLite waits on a lock held by another process before giving up (writers in
    /// this process queue for the one writer connection instead). Default: 5 seconds.
    pub sqlite_busy_timeout: Duration,
    /// How SQLite makes a commit durable. Default: [`SqliteDurability::Full`].
    pub sqlite_durability: SqliteDurability,
}

/// How SQLite makes a commit durable (its `synchronous` setting in WAL mode).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum SqliteDurability {
    /// `synchronous = FULL`: each commit is flushed to disk before the store answers, so an
    /// acknowledged payment survives a power cut. Costs about a third of the write rate.
    #[default]
    Full,
    /// `synchronous = NORMAL`: commits survive a crash of the process but the last ones may be
    /// lost on power loss or an operating-system crash; the database stays consistent.
    Normal,
}

impl Default for StoreOptions {
    fn default() -> Self {
        Self {
            max_connections: None,
            acquire_timeout: Duration::from_secs(5),
            sqlite_busy_timeout: Duration::from_secs(5),
            sqlite_durability: SqliteDurability::Full,
        }
    }
}

/// A pharmapay store over SQLite or PostgreSQL. Cloning is cheap; clones share the pools.
#[derive(Clone)]
pub struct SqlxStore {
    backend: Backend,
}

#[derive(Clone)]
enum Backend {
    Sqlite(sqlite::SqliteStore),
    Postgres(postgres::PostgresStore),
}

/// Where a URL points.
enum Target<'a> {
    Sqlite(sqlite::Location<'a>),
    Postgres(&'a str),
}

fn target(url: &str) -> Result<Target<'_>, error::Error> {
    let lower = url.trim_start().to_ascii_lowercase();
    if lower.starts_with("postgres://") || lower.starts_with("postgresql://") {
        Ok(Target::Postgres(url))
    } else if lower.starts_with("sqlite:") {
        Ok(Target::Sqlite(sqlite::Location::Url(url)))
    } else if lower.contains("://") {
        Err(error::Error::Config(format!(
            "unsupported database URL scheme in {:?}: use sqlite:, postgres:// or a file path",
            url.split("://").next().unwrap_or_default()
        )))
    } else if url.trim().is_empty() {
        Err(error::Error::Config("the database URL is empty".into()))
    } else {
        Ok(Target::Sqlite(sqlite::Location::Path(url)))
    }
}

impl SqlxStore {
    /// Connects (creating a SQLite file if missing) and runs the embedded migrations and seed.
    ///
    /// # Errors
    /// [`StoreError::Unavailable`] when the database cannot be reached within the acquire
    /// timeout; [`StoreError::Backend`] for a bad URL or a failed migration.
    pub async fn connect(url: &str) -> Result<SqlxStore, StoreError> {
        Self::connect_with(url, StoreOptions::default()).await
    }

    /// [`SqlxStore::connect`] with explicit pool and durability options.
    ///
    /// # Errors
    /// As [`SqlxStore::connect`].
    pub async fn connect_with(url: &str, options: StoreOptions) -> Result<SqlxStore, StoreError> {
        let backend = match target(url)? {
            Target::Sqlite(location) => Backend::Sqlite(sqlite::open(location, &options).await?),
            Target::Postgres(url) => Backend::Postgres(postgres::open(url, &options).await?),
        };
        Ok(SqlxStore { backend })
    }

    /// `"sqlite"` or `"postgres"`.
    pub fn backend(&self) -> &'static str {
        match &self.backend {
            Backend::Sqlite(_) => "sqlite",
            Backend::Postgres(_) => "postgres",
        }
    }

    /// Applies the embedded migrations not yet applied; harmless to call again (connect
    /// already does).
    ///
    /// # Errors
    /// [`StoreError::Backend`] when a migration fails or an applied one was edited.
    pub async fn migrate(&self) -> Result<(), StoreError> {
        match &self.backend {
            Backend::Sqlite(store) => store.migrate().await,
            Backend::Postgres(store) => store.migrate().await,
        }
        .map_err(StoreError::from)
    }

    /// The settings that decide the store's durability and integrity, read from a live
    /// connection, as `(name, value)` pairs: for SQLite `journal_mode`, `synchronous`,
    /// `foreign_keys`, `busy_timeout_ms` and `sqlite_version`; for PostgreSQL `server_version`,
    /// `default_transaction_isolation` and `synchronous_commit`. Connecting logs them at `info`.
    ///
    /// # Errors
    /// [`StoreError::Unavailable`] when no connection can be had.
    pub async fn facts(&self) -> Result<Vec<(&'static str, String)>, StoreError> {
        match &self.backend {
            Backend::Sqlite(store) => sqlite::facts(store).await,
            Backend::Postgres(store) => postgres::facts(store).await,
        }
        .map_err(StoreError::from)
    }

    /// Refreshes the query planner's statistics and PostgreSQL's visibility map; call it after
    /// a bulk load (a run of imports), so the queries that follow plan with the new table sizes
    /// and index-only scans (the dashboard's monthly totals, vendor totals) need not visit the
    /// table. PostgreSQL runs `VACUUM (ANALYZE)`, which autovacuum would do some time later when
    /// it is on; SQLite needs nothing, as its plans for this schema do not depend on statistics.
    ///
    /// # Errors
    /// [`StoreError::Unavailable`] or [`StoreError::Backend`] when the statement fails.
    pub async fn analyze(&self) -> Result<(), StoreError> {
        match &self.backend {
            Backend::Sqlite(_) => Ok(()),
            Backend::Postgres(store) => postgres::analyze(store).await.map_err(StoreError::from),
        }
    }

    /// Closes every connection; calls made afterwards fail with [`StoreError::Unavailable`].
    pub async fn close(&self) {
        match &self.backend {
            Backend::Sqlite(store) => store.close().await,
            Backend::Postgres(store) => store.close().await,
        }
    }
}

/// An embedded migration: applied once, in its own transaction, in version order.
pub(crate) struct Migration {
    /// Its version: 1, 2, 3 ...
    pub(crate) version: i64,
    /// What it does.
    pub(crate) description: &'static str,
    /// Its SQL, possibly many statements.
    pub(crate) sql: &'static str,
    /// True for the migration whose transaction also writes the seed data (D27).
    pub(crate) seeds: bool,
}

/// A checksum of a migration's text, kept with the applied migration so an edited file is
/// noticed: 64-bit FNV-1a, in hexadecimal. It guards against accidents, not attackers.
pub(crate) fn checksum(text: &str) -> String {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in text.bytes() {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    format!("{hash:016x}")
}

/// Locks that serialise a kind of write across every connection (PostgreSQL advisory locks
/// held until the transaction ends; SQLite's writers are serialised already).
#[derive(Clone, Copy, Debug)]
pub(crate) enum Lock {
    /// Applying migrations.
    Migrations,
    /// One-time onboarding.
    Onboarding,
    /// Changes that may remove an admin (D18).
    Admins,
}

impl Lock {
    /// The advisory lock key: "pharmapay" in ASCII in the high bytes, the lock's number below.
    pub(crate) fn key(self) -> i64 {
        const BASE: i64 = 0x7068_6172_6d61_0000;
        BASE + match self {
            Lock::Migrations => 1,
            Lock::Onboarding => 2,
            Lock::Admins => 3,
        }
    }
}

/// Implements `Store` for [`SqlxStore`] by handing each call to the backend's store (which
/// has an inherent method of the same name and arguments) and mapping its error once.
macro_rules! delegate {
    ($( fn $name:ident(&self $(, $arg:ident: $ty:ty)*) -> $ret:ty; )*) => {
        impl Store for SqlxStore {
            $(
                async fn $name(&self $(, $arg: $ty)*) -> StoreResult<$ret> {
                    match &self.backend {
                        Backend::Sqlite(store) => store.$name($($arg),*).await,
                        Backend::Postgres(store) => store.$name($($arg),*).await,
                    }
                    .map_err(StoreError::from)
                }
            )*
        }
    };
}

delegate! {
    fn health(&self) -> ();
    fn is_onboarded(&self) -> bool;
    fn complete_onboarding(&self, pharmacy: NewVendor, admin: NewUserRecord, ctx: WriteContext) -> (Vendor, User);
    fn token_secret(&self, candidate: Secret) -> Secret;
    fn find_credentials(&self, email_key: &str) -> Option<Credentials>;
    fn credentials(&self, user_id: UserId) -> Option<Credentials>;
    fn session_state(&self, user_id: UserId) -> Option<SessionState>;
    fn resolve_permissions(&self, user_id: UserId) -> Vec<Permission>;
    fn begin_login_attempt(&self, email_key: &str, now: Timestamp, limit: u32, window: SignedDuration) -> LoginGate;
    fn clear_login_attempts(&self, email_key: &str) -> ();
    fn append_audit(&self, entry: NewAuditEntry) -> ();
    fn claim_idempotency_key(&self, claim: IdempotencyClaim) -> ClaimOutcome;
    fn record_idempotent_response(&self, user_id: UserId, key: &IdempotencyKey, response: Vec<u8>) -> ();
    fn release_idempotency_key(&self, user_id: UserId, key: &IdempotencyKey) -> ();
    fn insert_vendor(&self, vendor: NewVendor, ctx: WriteContext) -> Vendor;
    fn get_vendor(&self, id: VendorId) -> Option<Vendor>;
    fn update_vendor(&self, id: VendorId, vendor: NewVendor, ctx: WriteContext) -> Vendor;
    fn delete_vendor(&self, id: VendorId, ctx: WriteContext) -> ();
    fn restore_vendor(&self, id: VendorId, ctx: WriteContext) -> Vendor;
    fn list_vendors(&self, query: &VendorQuery) -> Page<Vendor>;
    fn insert_invoice(&self, invoice: NewInvoice, ctx: WriteContext, today_start: Timestamp) -> Invoice;
    fn get_invoice(&self, id: InvoiceId, today_start: Timestamp) -> Option<InvoiceDetail>;
    fn update_invoice(&self, id: InvoiceId, invoice: NewInvoice, ctx: WriteContext, today_start: Timestamp) -> Invoice;
    fn delete_invoice(&self, id: InvoiceId, ctx: WriteContext) -> ();
    fn restore_invoice(&self, id: InvoiceId, ctx: WriteContext, today_start: Timestamp) -> Invoice;
    fn list_invoices(&self, query: &InvoiceQuery, today_start: Timestamp) -> Page<Invoice>;
    fn insert_transaction(&self, transaction: NewTransaction, ctx: WriteContext) -> Transaction;
    fn get_transaction(&self, id: TransactionId) -> Option<Transaction>;
    fn update_transaction(&self, id: TransactionId, transaction: NewTransaction, ctx: WriteContext) -> Transaction;
    fn delete_transaction(&self, id: TransactionId, ctx: WriteContext) -> ();
    fn restore_transaction(&self, id: TransactionId, ctx: WriteContext) -> Transaction;
    fn list_transactions(&self, query: &TransactionQuery) -> Page<Transaction>;
    fn insert_user(&self, user: NewUserRecord, ctx: WriteContext) -> User;
    fn get_user(&self, id: UserId) -> Option<User>;
    fn list_users(&self) -> Vec<User>;
    fn update_user(&self, id: UserId, user: UserUpdate, ctx: WriteContext) -> User;
    fn delete_user(&self, id: UserId, ctx: WriteContext) -> ();
    fn restore_user(&self, id: UserId, ctx: WriteContext) -> User;
    fn update_profile(&self, id: UserId, profile: ProfileUpdate, ctx: WriteContext) -> User;
    fn set_password(&self, id: UserId, password_hash: String, ctx: WriteContext) -> ();
    fn list_user_policies(&self, user_id: UserId) -> Vec<Policy>;
    fn attach_user_policy(&self, user_id: UserId, policy_id: PolicyId, ctx: WriteContext) -> ();
    fn detach_user_policy(&self, user_id: UserId, policy_id: PolicyId, ctx: WriteContext) -> ();
    fn insert_role(&self, role: NewRole, ctx: WriteContext) -> Role;
    fn get_role(&self, id: RoleId) -> Option<Role>;
    fn list_roles(&self) -> Vec<Role>;
    fn update_role(&self, id: RoleId, role: NewRole, ctx: WriteContext) -> Role;
    fn delete_role(&self, id: RoleId, ctx: WriteContext) -> ();
    fn restore_role(&self, id: RoleId, ctx: WriteContext) -> Role;
    fn attach_role_policy(&self, role_id: RoleId, policy_id: PolicyId, ctx: WriteContext) -> ();
    fn detach_role_policy(&self, role_id: RoleId, policy_id: PolicyId, ctx: WriteContext) -> ();
    fn list_permissions(&self) -> Vec<Permission>;
    fn insert_policy(&self, policy: NewPolicy, ctx: WriteContext) -> Policy;
    fn get_policy(&self, id: PolicyId) -> Option<Policy>;
    fn list_policies(&self) -> Vec<Policy>;
    fn update_policy(&self, id: PolicyId, policy: NewPolicy, ctx: WriteContext) -> Policy;
    fn delete_policy(&self, id: PolicyId, ctx: WriteContext) -> ();
    fn restore_policy(&self, id: PolicyId, ctx: WriteContext) -> Policy;
    fn add_policy_permission(&self, policy_id: PolicyId, permission_id: PermissionId, ctx: WriteContext) -> ();
    fn remove_policy_permission(&self, policy_id: PolicyId, permission_id: PermissionId, ctx: WriteContext) -> ();
    fn list_settings(&self) -> Vec<Setting>;
    fn get_setting(&self, key: &str) -> Option<Setting>;
    fn update_setting(&self, key: &str, value: String, ctx: WriteContext) -> Setting;
    fn dashboard_summary(&self, recent_from: Timestamp) -> Summary;
    fn top_vendors(&self, limit: u32) -> Vec<TopVendor>;
    fn recent_invoices(&self, limit: u32, today_start: Timestamp) -> Vec<Invoice>;
    fn payment_totals(&self, windows: &[(Timestamp, Timestamp)]) -> Vec<PeriodTotal>;
    fn list_audit(&self, query: &AuditQuery) -> Page<AuditEntry>;
    fn export_vendors(&self, filter: &VendorFilter, after: Option<VendorId>, limit: u32) -> Vec<Vendor>;
    fn export_invoices(&self, filter: &InvoiceFilter, today_start: Timestamp, after: Option<InvoiceId>, limit: u32) -> Vec<Invoice>;
    fn export_transactions(&self, filter: &TransactionFilter, after: Option<TransactionId>, limit: u32) -> Vec<Transaction>;
    fn import_vendors(&self, vendors: Vec<ImportedVendor>) -> Vec<VendorId>;
    fn import_invoices(&self, invoices: Vec<ImportedInvoice>) -> Vec<InvoiceId>;
    fn import_transactions(&self, transactions: Vec<ImportedTransaction>) -> Vec<TransactionId>;
}
