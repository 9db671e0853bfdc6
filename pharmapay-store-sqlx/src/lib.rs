//! SQL stores for the pharmapay engine: SQLite and PostgreSQL through sqlx.
//!
//! [`SqliteStore`] and [`PostgresStore`] implement [`pharmapay_core::Store`] (and
//! [`pharmapay_core::ImportStore`]) over each database. [`SqlxStore::connect`] picks one from
//! the URL: `sqlite:`, `sqlite://path` or a plain file path opens (and creates) a SQLite file;
//! `postgres://` or `postgresql://` connects to PostgreSQL. The caller matches the
//! [`SqlxStore`] it gets once and runs the engine over the concrete store. Connecting applies
//! the embedded migrations (`migrations/<backend>/`) and the seed data of D27.
//!
//! # Layout
//! - `common/` holds the store itself, written once in SQL both databases understand, one file
//!   per purpose of the contract: every method is one database transaction that loads the
//!   facts a rule of `pharmapay_core::rules` names, asks it and writes what it allows. It is
//!   compiled twice, as `sqlite::common` and `postgres::common`, each time over that backend's
//!   `Db` type and dialect macros, giving [`SqliteStore`] and [`PostgresStore`].
//! - `sqlite.rs` and `postgres.rs` hold what differs: connection settings, how a write
//!   transaction starts and locks, identity sequences, and the migration list.
//! - `group_commit.rs` batches the SQLite writer's writes into shared commits; `read_pool.rs`
//!   lends both backends' reader connections without sqlx's pool, whose test of every
//!   returned connection cost a read as much as a statement, and without a ping: a read that
//!   meets a dead connection runs again.
//! - `error.rs` maps sqlx's errors into [`StoreError`] once.
//! - `testing.rs` (feature `test-support`): fresh PostgreSQL databases for tests.
//! - `landed.rs` (a test) holds the checksum of every migration as it landed: a landed
//!   migration is never edited, a change is a new one.
//! - [`statements`] holds the SQL fragments statements share and the texts of the fixed
//!   statements on the hot paths, which the store sends and benchmarks may import.
//!
//! # Guarantees and choices
//! - Money is stored exactly, as integers of ten-thousandths (D1); sums are integer sums.
//!   Each invoice keeps its paid total in its row, updated in the same transaction as every
//!   payment change, so figures never sum payments on read.
//! - Cross-row rules (active parents, unique numbers among active rows, the last admin, one
//!   OwnPharmacy, one onboarding, login counting, idempotency claims) are checked inside the
//!   method's own transaction. SQLite serialises writers: each write runs on the single
//!   writer connection, in a transaction begun with `BEGIN IMMEDIATE`. Writes that queue for
//!   it share that transaction and its commit (group commit), each inside a savepoint of its
//!   own, so a refused write rolls back alone and none is answered before its batch is on
//!   disk. PostgreSQL runs at READ COMMITTED with
//!   row locks (`FOR UPDATE`, `FOR SHARE`) taken in one fixed order (payments, then vendors,
//!   then their invoices, then the figure rows; a write ended for a lock cycle runs again),
//!   atomic `paid = paid + $n` updates and transaction-scoped advisory locks for
//!   onboarding and the last-admin rule; partial unique indexes settle the remaining races and
//!   their violations become `Conflict` (D5).
//! - SQLite runs in WAL mode with `synchronous = FULL`: every commit is on disk before the
//!   store answers, so an acknowledged payment survives a power cut. The measured cost is about
//!   a third of the write rate (roughly 0.9 to 1.5 thousand payments a second instead of 1.8 to
//!   2.2 thousand with NORMAL, which may lose the last commits on power loss), far above what a
//!   pharmacy chain records. Group commit spreads a commit's wait for the disk over the
//!   writes that queued meanwhile. [`StoreOptions::sqlite_durability`] can choose NORMAL.
//! - Lists, sorts, pages, filters and dashboard figures run in SQL over indexes made for them;
//!   nothing loads a table into memory. A page and its total count are one statement, so they
//!   always agree.
//!
//! # Performance at a chain's scale
//! Measured on a 2 vCPU machine with 10,000 vendors, 1,000,000 invoices and 3,000,000 payments
//! loaded with `pharmapay seed-demo`, release build, one connection (`BENCHMARKS.md` has the
//! whole run):
//! - one vendor with its totals: about 0.2 ms over HTTP on SQLite, 0.5 ms on PostgreSQL; the
//!   dashboard and the first pages of the lists read kept figures (D41) and indexes: 0.2 to
//!   3 ms; searches through the trigram indexes 1 to 12 ms; the licence alerts, a whole list
//!   of about a thousand vendors, 2 to 5 ms.
//! - aging over every vendor sums every open invoice: about 0.5 to 0.8 s as of today, about
//!   1.5 s as of a year back (the later payments are read too, from the payments' date index);
//!   a year's statement of the largest vendor (10,555 invoices) about 0.3 s.
//! - bulk loads ([`ImportStore`](pharmapay_core::store::ImportStore)) set aside the kept
//!   figures, triggers and secondary indexes, then rebuild them in one pass: `seed-demo` at
//!   this scale takes about 35 s on SQLite and 160 s on PostgreSQL, where each paid-total
//!   change is a non-HOT update; the store runs `VACUUM (ANALYZE)` after a PostgreSQL load.

/// The embedded migrations of the backend whose folder under `migrations/` is `$backend`, in
/// version order; both backends have the same list, each in its own dialect.
macro_rules! migrations {
    ($backend:literal) => {
        [
            Migration {
                version: 1,
                description: "schema",
                sql: include_str!(concat!("../migrations/", $backend, "/0001_schema.sql")),
                seeds: true,
                recounts_figures: false,
                rekeys_references: false,
            },
            Migration {
                version: 2,
                description: "open invoice counts",
                sql: include_str!(concat!("../migrations/", $backend, "/0002_open_invoice_counts.sql")),
                seeds: false,
                recounts_figures: false,
                rekeys_references: false,
            },
            Migration {
                version: 3,
                description: "token issue seconds and login failures",
                sql: include_str!(concat!("../migrations/", $backend, "/0003_token_issue_and_login_failures.sql")),
                seeds: false,
                recounts_figures: false,
                rekeys_references: false,
            },
            Migration {
                version: 4,
                description: "kept figures and indexed search",
                sql: include_str!(concat!("../migrations/", $backend, "/0004_kept_figures_and_search.sql")),
                seeds: false,
                recounts_figures: true,
                rekeys_references: false,
            },
            Migration {
                version: 5,
                description: "vendor payments and payment references",
                sql: include_str!(concat!("../migrations/", $backend, "/0005_vendor_payments_and_references.sql")),
                seeds: false,
                recounts_figures: false,
                rekeys_references: false,
            },
            Migration {
                version: 6,
                description: "vendor master: drug licence validity and GSTIN",
                sql: include_str!(concat!("../migrations/", $backend, "/0006_vendor_master.sql")),
                seeds: false,
                recounts_figures: false,
                rekeys_references: false,
            },
            Migration {
                version: 7,
                description: "bulk loads",
                sql: include_str!(concat!("../migrations/", $backend, "/0007_bulk_loads.sql")),
                seeds: false,
                recounts_figures: false,
                rekeys_references: false,
            },
            Migration {
                version: 8,
                description: "aging later payments",
                sql: include_str!(concat!("../migrations/", $backend, "/0008_aging_later_payments.sql")),
                seeds: false,
                recounts_figures: false,
                rekeys_references: false,
            },
            Migration {
                version: 9,
                description: "payments newest first",
                sql: include_str!(concat!("../migrations/", $backend, "/0009_payments_newest_first.sql")),
                seeds: false,
                recounts_figures: false,
                rekeys_references: false,
            },
            Migration {
                version: 10,
                description: "licence alerts covered",
                sql: include_str!(concat!("../migrations/", $backend, "/0010_licence_alerts_covered.sql")),
                seeds: false,
                recounts_figures: false,
                rekeys_references: false,
            },
            Migration {
                version: 11,
                description: "trigram pending lists",
                sql: include_str!(concat!("../migrations/", $backend, "/0011_trigram_pending_lists.sql")),
                seeds: false,
                recounts_figures: false,
                rekeys_references: false,
            },
            Migration {
                version: 12,
                description: "payment reference keys",
                sql: include_str!(concat!("../migrations/", $backend, "/0012_reference_keys.sql")),
                seeds: false,
                recounts_figures: false,
                rekeys_references: true,
            },
            Migration {
                version: 13,
                description: "what each vendor is owed",
                sql: include_str!(concat!("../migrations/", $backend, "/0013_vendors_owed.sql")),
                seeds: false,
                recounts_figures: true,
                rekeys_references: false,
            },
            Migration {
                version: 14,
                description: "statement lines per vendor and day",
                sql: include_str!(concat!("../migrations/", $backend, "/0014_vendor_days.sql")),
                seeds: false,
                recounts_figures: true,
                rekeys_references: false,
            },
            Migration {
                version: 15,
                description: "vendor credits",
                sql: include_str!(concat!("../migrations/", $backend, "/0015_vendor_credits.sql")),
                seeds: false,
                recounts_figures: false,
                rekeys_references: false,
            },
            Migration {
                version: 16,
                description: "credit applications",
                sql: include_str!(concat!("../migrations/", $backend, "/0016_credit_applications.sql")),
                seeds: false,
                recounts_figures: true,
                rekeys_references: false,
            },
            Migration {
                version: 17,
                description: "bank statements",
                sql: include_str!(concat!("../migrations/", $backend, "/0017_bank_statements.sql")),
                seeds: false,
                recounts_figures: false,
                rekeys_references: false,
            },
            Migration {
                version: 18,
                description: "events",
                sql: include_str!(concat!("../migrations/", $backend, "/0018_events.sql")),
                seeds: false,
                recounts_figures: false,
                rekeys_references: false,
            },
        ]
    };
}

// The statements' fragment macros are used by `common/`, compiled in the backend modules below.
#[macro_use]
pub mod statements;

mod error;
mod group_commit;
#[cfg(test)]
mod landed;
mod postgres;
mod read_pool;
mod sqlite;
#[cfg(feature = "test-support")]
pub mod testing;

use std::time::Duration;

use pharmapay_core::StoreError;

pub use postgres::PostgresStore;
pub use sqlite::SqliteStore;

/// Pool sizes, timeouts and durability; [`StoreOptions::default`] is what a server wants.
#[derive(Clone, Debug)]
pub struct StoreOptions {
    /// Most connections: PostgreSQL's reader connections and, as many again, its connections
    /// for writes; or the number of SQLite reader connections (SQLite always has exactly one
    /// writer connection besides them). `None` means [`StoreOptions::POSTGRES_CONNECTIONS`]
    /// or [`StoreOptions::SQLITE_READERS`].
    pub max_connections: Option<u32>,
    /// How long a call waits for a connection before failing with
    /// [`StoreError::Unavailable`]; it also bounds connecting, so an unreachable database is
    /// reported after this long instead of hanging. Default: 5 seconds.
    pub acquire_timeout: Duration,
    /// How long a read that may take seconds (a chain's aging, a vendor's statement) waits for
    /// its turn before failing with [`StoreError::Unavailable`]: only
    /// [`StoreOptions::long_reads`] such reads run at once, and the rest queue, first come
    /// first served. Its
    /// connection is then borrowed within `acquire_timeout`. Default: 30 seconds.
    pub long_read_wait: Duration,
    /// How many reads that may take seconds run at once. `None` means
    /// [`StoreOptions::default_long_reads`] of the reader connections.
    pub long_reads: Option<u32>,
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

impl StoreOptions {
    /// PostgreSQL's reader connections, and as many for writes, unless
    /// [`StoreOptions::max_connections`] says otherwise: more than two cores can keep busy, and
    /// two servers' 40 stay well under the database's default limit of 100.
    pub const POSTGRES_CONNECTIONS: u32 = 10;
    /// SQLite's reader connections unless [`StoreOptions::max_connections`] says otherwise.
    pub const SQLITE_READERS: u32 = 8;

    /// Long reads at once over `readers` reader connections, unless
    /// [`StoreOptions::long_reads`] says otherwise: half the readers, so short reads keep the
    /// rest, and half the cores, so that while long reads run the others keep a core to be
    /// answered on (D48; a chain's aging keeps a core busy for seconds: with as many running as
    /// cores, everyone's profile fetches took more than twice as long); at least one.
    pub fn default_long_reads(readers: u32) -> u32 {
        let cores = std::thread::available_parallelism().map_or(2, |cores| u32::try_from(cores.get()).unwrap_or(2));
        (readers / 2).min(cores / 2).max(1)
    }
}

impl Default for StoreOptions {
    fn default() -> Self {
        Self {
            max_connections: None,
            acquire_timeout: Duration::from_secs(5),
            long_read_wait: Duration::from_secs(30),
            long_reads: None,
            sqlite_busy_timeout: Duration::from_secs(5),
            sqlite_durability: SqliteDurability::Full,
        }
    }
}

/// A pharmapay store over SQLite or PostgreSQL, as [`SqlxStore::connect`] found it from the URL.
///
/// Each variant is a complete [`Store`](pharmapay_core::Store) (and
/// [`ImportStore`](pharmapay_core::ImportStore)): match once, where the store is opened, and
/// run the engine over the concrete store, so no call pays for choosing a backend. Cloning is
/// cheap; clones share the pools.
#[derive(Clone)]
pub enum SqlxStore {
    /// A SQLite file.
    Sqlite(SqliteStore),
    /// A PostgreSQL database.
    Postgres(PostgresStore),
}

/// Where a URL points.
pub(crate) enum Target<'a> {
    Sqlite(sqlite::Location<'a>),
    Postgres(&'a str),
}

pub(crate) fn target(url: &str) -> Result<Target<'_>, error::Error> {
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
        Ok(match target(url)? {
            Target::Sqlite(location) => SqlxStore::Sqlite(sqlite::open(location, &options).await?),
            Target::Postgres(url) => SqlxStore::Postgres(postgres::open(url, &options).await?),
        })
    }

    /// `"sqlite"` or `"postgres"`.
    pub fn backend(&self) -> &'static str {
        match self {
            SqlxStore::Sqlite(store) => store.backend(),
            SqlxStore::Postgres(store) => store.backend(),
        }
    }

    /// Applies the embedded migrations not yet applied; harmless to call again (connect
    /// already does).
    ///
    /// # Errors
    /// [`StoreError::Backend`] when a migration fails or an applied one was edited.
    pub async fn migrate(&self) -> Result<(), StoreError> {
        match self {
            SqlxStore::Sqlite(store) => store.migrate().await,
            SqlxStore::Postgres(store) => store.migrate().await,
        }
    }

    /// The settings that decide the store's durability and integrity, read from a live
    /// connection, as `(name, value)` pairs: for SQLite `journal_mode`, `synchronous`,
    /// `foreign_keys`, `busy_timeout_ms` and `sqlite_version`; for PostgreSQL `server_version`,
    /// `default_transaction_isolation` and `synchronous_commit`. Connecting logs them at `info`.
    ///
    /// # Errors
    /// [`StoreError::Unavailable`] when no connection can be had.
    pub async fn facts(&self) -> Result<Vec<(&'static str, String)>, StoreError> {
        match self {
            SqlxStore::Sqlite(store) => store.facts().await,
            SqlxStore::Postgres(store) => store.facts().await,
        }
    }

    /// Refreshes the query planner's statistics and PostgreSQL's visibility map; call it after
    /// a bulk load (a run of imports), so the queries that follow plan with the new table sizes
    /// and index-only scans (the dashboard's monthly totals, vendor totals) need not visit the
    /// table. PostgreSQL runs `VACUUM (ANALYZE)` over the store's tables, which autovacuum would
    /// do some time later when it is on; SQLite needs nothing, as its plans for this schema do
    /// not depend on statistics.
    ///
    /// # Errors
    /// [`StoreError::Unavailable`] or [`StoreError::Backend`] when the statement fails.
    pub async fn analyze(&self) -> Result<(), StoreError> {
        match self {
            SqlxStore::Sqlite(store) => store.analyze().await,
            SqlxStore::Postgres(store) => store.analyze().await,
        }
    }

    /// Closes every connection; calls made afterwards fail with [`StoreError::Unavailable`].
    pub async fn close(&self) {
        match self {
            SqlxStore::Sqlite(store) => store.close().await,
            SqlxStore::Postgres(store) => store.close().await,
        }
    }
}

/// How many long reads run at once over `readers` reader connections, and how long one waits
/// for its turn, as `options` say.
pub(crate) fn long_reads(options: &StoreOptions, readers: u32) -> (u32, Duration) {
    let at_once = options.long_reads.unwrap_or_else(|| StoreOptions::default_long_reads(readers));
    (at_once, options.long_read_wait)
}

/// Runs `step` of a write on a task of its own and waits for it: the step runs to its end even
/// when the caller stops waiting (a request dropped because its client went away), and what it
/// leaves behind is dropped on that task. A write's beginning and its end go through here, so
/// its outcome never depends on whether someone still waits for it.
pub(crate) async fn to_the_end<T: Send + 'static>(
    step: impl Future<Output = Result<T, sqlx::Error>> + Send + 'static,
) -> Result<T, sqlx::Error> {
    match tokio::spawn(step).await {
        Ok(done) => done,
        Err(failed) if failed.is_panic() => std::panic::resume_unwind(failed.into_panic()),
        // Cancelled: the runtime is shutting down, and the step's outcome is unknown.
        Err(_) => Err(sqlx::Error::WorkerCrashed),
    }
}

/// A statement the store sends, with the values bound to it in placeholder order: what the
/// load harness times directly beside the server, so that it measures the store's own SQL rather
/// than a copy (`SqliteStore::invoice_page_statement` and friends).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BoundStatement {
    /// The text, with `$1`, `$2` ... placeholders.
    pub sql: String,
    /// The values, in placeholder order.
    pub values: Vec<BoundValue>,
}

/// A value bound to a statement.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BoundValue {
    /// An integer, or NULL.
    Int(Option<i64>),
    /// A boolean.
    Bool(bool),
    /// Text, or NULL.
    Text(Option<String>),
}

/// How a backend looks search terms up (see `common/search.rs`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum SearchIndex {
    /// SQLite's FTS5 tables with the trigram tokenizer, queried by phrase.
    Fts5,
    /// PostgreSQL's `pg_trgm` GIN indexes, which serve `LIKE` directly.
    Trigram,
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
    /// True for a migration after whose SQL every kept figure (D41) is recounted from the rows in
    /// the same transaction, so an existing database upgrades in place.
    pub(crate) recounts_figures: bool,
    /// True for a migration after whose SQL every stored payment reference's key is computed
    /// again by the core's rule (D30, D48), in the same transaction.
    pub(crate) rekeys_references: bool,
}

/// A checksum of a migration's text, kept with the applied migration so an edited file is
/// noticed: 64-bit FNV-1a, in hexadecimal. It guards against accidents, not attackers.
pub(crate) fn checksum(text: &str) -> String {
    format!("{:016x}", fnv1a(text.as_bytes()))
}

/// 64-bit FNV-1a of `bytes`.
fn fnv1a(bytes: &[u8]) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in bytes {
        hash ^= u64::from(*byte);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    hash
}

/// The tables whose ids imports reserve up front, so the ids they answer follow the input order.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Table {
    /// `vendors`.
    Vendors,
    /// `invoices`.
    Invoices,
    /// `transactions`.
    Transactions,
    /// `vendor_credits`.
    Credits,
    /// `credit_applications`.
    CreditApplications,
}

/// Locks that serialise a kind of write across every connection (PostgreSQL advisory locks
/// held until the transaction ends; SQLite's writers are serialised already).
#[derive(Clone, Copy, Debug)]
pub(crate) enum Lock {
    /// Applying migrations.
    Migrations,
    /// One-time onboarding.
    Onboarding,
    /// Changes to users, roles and policies: the last admin (D18), grants (D38) and the token
    /// revocations they cause (D39) are decided one change at a time, so these writes never
    /// wait on each other's row locks in a cycle.
    Access,
    /// Writes that make a payment reference active, by a hash of its type and key (D30): two
    /// writers of one reference are decided one after the other; a rare hash collision only
    /// makes two references wait for each other. Each also holds [`Lock::AllReferences`] shared.
    Reference(u32),
    /// Every payment reference at once, for an import that may bring thousands (one lock per
    /// reference would exhaust PostgreSQL's lock table): held alone, it waits for the writers
    /// of single references, which hold it shared, and keeps new ones out until it ends.
    AllReferences,
    /// Bank statements (D46): uploads and line actions are decided one at a time, so a payment
    /// is held by one line at most. Taken after the time zone setting and before any payment
    /// reference's lock.
    BankStatements,
    /// Giving committed events their positions in the feed (D47): one sequencer at a time
    /// across every server sharing the database, so positions follow the order it finds events
    /// in. Taken alone, by a transaction that writes nothing else.
    EventPositions,
    /// Queuing and claiming webhook deliveries (D47): one server at a time decides which
    /// deliveries exist and which it takes, so none is queued twice or tried by two at once.
    Deliveries,
    /// Vendor imports (D45, D51): one at a time, so two imports of the same new vendors never
    /// both create them; the later one finds the earlier one's. Taken after the time zone
    /// setting and before any vendor's row lock; no other write takes it.
    VendorImports,
}

impl Lock {
    /// The lock of the reference key `key` among payments of type `kind` (D30).
    pub(crate) fn reference(kind: &str, key: &str) -> Self {
        let hash = fnv1a(format!("{kind}\u{0}{key}").as_bytes());
        Lock::Reference((hash ^ (hash >> 32)) as u32)
    }

    /// The advisory lock key: "pharmapay" in ASCII in the high bytes, the lock's number below (or
    /// "ref" and a reference's hash).
    pub(crate) fn key(self) -> i64 {
        const BASE: i64 = 0x7068_6172_6d61_0000;
        // "ref" in ASCII in the high bytes, the reference's hash below.
        const REFERENCES: i64 = 0x7265_6600_0000_0000;
        match self {
            Lock::Migrations => BASE + 1,
            Lock::Onboarding => BASE + 2,
            Lock::Access => BASE + 3,
            Lock::AllReferences => BASE + 4,
            Lock::BankStatements => BASE + 5,
            Lock::EventPositions => BASE + 6,
            Lock::Deliveries => BASE + 7,
            Lock::VendorImports => BASE + 8,
            Lock::Reference(hash) => REFERENCES + i64::from(hash),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::StoreOptions;

    #[test]
    fn long_reads_keep_half_the_readers_and_half_the_cores_for_everyone_else() {
        let cores = std::thread::available_parallelism().map_or(2, |cores| cores.get() as u32);
        assert_eq!(StoreOptions::default_long_reads(8), 4.min(cores / 2).max(1));
        assert_eq!(StoreOptions::default_long_reads(1), 1, "at least one");
        let set = StoreOptions { long_reads: Some(3), ..StoreOptions::default() };
        assert_eq!(super::long_reads(&set, 8).0, 3, "a setting wins");
    }
}
