//! SQL stores for the pharmapay engine: SQLite and PostgreSQL through sqlx.
//!
//! [`SqliteStore`] and [`PostgresStore`] implement [`pharmapay_core::Store`] (and
//! [`pharmapay_core::BulkLoadStore`]) over each database. [`SqlxStore::connect`] picks one from
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
//! - `sqlite.rs` and `postgres.rs` hold what differs: connection settings and opening; their
//!   dialects (`sqlite/`, `postgres/`) what the shared body asks of the backend: how a
//!   write transaction starts and locks, identity sequences, and the migration list.
//! - `options.rs` holds [`StoreOptions`] and which backend a URL names; `schema.rs` the
//!   migrations' shape and checksums, the tables and the advisory locks both backends share;
//!   `tasks.rs` the steps of a write that run to their end on tasks of their own.
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
//! - bulk loads ([`BulkLoadStore`](pharmapay_core::store::BulkLoadStore)) set aside the kept
//!   figures, triggers and secondary indexes, then rebuild them in one pass: `seed-demo` at
//!   this scale takes about 35 s on SQLite and 160 s on PostgreSQL, where each paid-total
//!   change is a non-HOT update; the store runs `VACUUM (ANALYZE)` after a PostgreSQL load.

/// The entry points of a backend's store that open it and read its settings, written once
/// for both backends: each backend file states them for its store, over its own `open_url`,
/// `facts` and `analyze`.
macro_rules! entry_points {
    ($store:ident) => {
        impl $store {
            /// Connects to the database at `url` with the default options (a SQLite file is created
            /// if missing); connecting applies the migrations and the seed. A URL of the other backend
            /// is refused.
            ///
            /// # Errors
            /// As [`crate::SqlxStore::connect`].
            pub async fn connect(url: &str) -> ::pharmapay_core::StoreResult<Self> {
                Self::connect_with(url, $crate::StoreOptions::default()).await
            }

            /// [`Self::connect`] with explicit pool and durability options.
            ///
            /// # Errors
            /// As [`Self::connect`].
            pub async fn connect_with(url: &str, options: $crate::StoreOptions) -> ::pharmapay_core::StoreResult<Self> {
                Ok(open_url(url, &options).await?)
            }

            /// The settings that decide the store's durability and integrity, as
            /// [`crate::SqlxStore::facts`] lists them for this backend.
            ///
            /// # Errors
            /// [`StoreError::Unavailable`] when no connection can be had.
            pub async fn facts(&self) -> ::pharmapay_core::StoreResult<Vec<(&'static str, String)>> {
                Ok(facts(self).await?)
            }

            /// Refreshes the query planner's statistics after a bulk load, as
            /// [`crate::SqlxStore::analyze`] says (nothing to do for SQLite).
            ///
            /// # Errors
            /// [`StoreError::Unavailable`] or [`StoreError::Backend`] when the statement fails.
            pub async fn analyze(&self) -> ::pharmapay_core::StoreResult<()> {
                Ok(analyze(self).await?)
            }
        }
    };
}

/// The embedded migrations of the backend whose folder under `migrations/` is `$backend`, in
/// version order; both backends have the same list, each in its own dialect.
macro_rules! migrations {
    ($backend:literal) => {
        [
            Migration {
                version: 1,
                description: "schema",
                sql: include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/migrations/", $backend, "/0001_schema.sql")),
                seeds: true,
                recounts_figures: false,
                rekeys_references: false,
            },
            Migration {
                version: 2,
                description: "open invoice counts",
                sql: include_str!(concat!(
                    env!("CARGO_MANIFEST_DIR"),
                    "/migrations/",
                    $backend,
                    "/0002_open_invoice_counts.sql"
                )),
                seeds: false,
                recounts_figures: false,
                rekeys_references: false,
            },
            Migration {
                version: 3,
                description: "token issue seconds and login failures",
                sql: include_str!(concat!(
                    env!("CARGO_MANIFEST_DIR"),
                    "/migrations/",
                    $backend,
                    "/0003_token_issue_and_login_failures.sql"
                )),
                seeds: false,
                recounts_figures: false,
                rekeys_references: false,
            },
            Migration {
                version: 4,
                description: "kept figures and indexed search",
                sql: include_str!(concat!(
                    env!("CARGO_MANIFEST_DIR"),
                    "/migrations/",
                    $backend,
                    "/0004_kept_figures_and_search.sql"
                )),
                seeds: false,
                recounts_figures: true,
                rekeys_references: false,
            },
            Migration {
                version: 5,
                description: "vendor payments and payment references",
                sql: include_str!(concat!(
                    env!("CARGO_MANIFEST_DIR"),
                    "/migrations/",
                    $backend,
                    "/0005_vendor_payments_and_references.sql"
                )),
                seeds: false,
                recounts_figures: false,
                rekeys_references: false,
            },
            Migration {
                version: 6,
                description: "vendor master: drug licence validity and GSTIN",
                sql: include_str!(concat!(
                    env!("CARGO_MANIFEST_DIR"),
                    "/migrations/",
                    $backend,
                    "/0006_vendor_master.sql"
                )),
                seeds: false,
                recounts_figures: false,
                rekeys_references: false,
            },
            Migration {
                version: 7,
                description: "bulk loads",
                sql: include_str!(concat!(
                    env!("CARGO_MANIFEST_DIR"),
                    "/migrations/",
                    $backend,
                    "/0007_bulk_loads.sql"
                )),
                seeds: false,
                recounts_figures: false,
                rekeys_references: false,
            },
            Migration {
                version: 8,
                description: "aging later payments",
                sql: include_str!(concat!(
                    env!("CARGO_MANIFEST_DIR"),
                    "/migrations/",
                    $backend,
                    "/0008_aging_later_payments.sql"
                )),
                seeds: false,
                recounts_figures: false,
                rekeys_references: false,
            },
            Migration {
                version: 9,
                description: "payments newest first",
                sql: include_str!(concat!(
                    env!("CARGO_MANIFEST_DIR"),
                    "/migrations/",
                    $backend,
                    "/0009_payments_newest_first.sql"
                )),
                seeds: false,
                recounts_figures: false,
                rekeys_references: false,
            },
            Migration {
                version: 10,
                description: "licence alerts covered",
                sql: include_str!(concat!(
                    env!("CARGO_MANIFEST_DIR"),
                    "/migrations/",
                    $backend,
                    "/0010_licence_alerts_covered.sql"
                )),
                seeds: false,
                recounts_figures: false,
                rekeys_references: false,
            },
            Migration {
                version: 11,
                description: "trigram pending lists",
                sql: include_str!(concat!(
                    env!("CARGO_MANIFEST_DIR"),
                    "/migrations/",
                    $backend,
                    "/0011_trigram_pending_lists.sql"
                )),
                seeds: false,
                recounts_figures: false,
                rekeys_references: false,
            },
            Migration {
                version: 12,
                description: "payment reference keys",
                sql: include_str!(concat!(
                    env!("CARGO_MANIFEST_DIR"),
                    "/migrations/",
                    $backend,
                    "/0012_reference_keys.sql"
                )),
                seeds: false,
                recounts_figures: false,
                rekeys_references: true,
            },
            Migration {
                version: 13,
                description: "what each vendor is owed",
                sql: include_str!(concat!(
                    env!("CARGO_MANIFEST_DIR"),
                    "/migrations/",
                    $backend,
                    "/0013_vendors_owed.sql"
                )),
                seeds: false,
                recounts_figures: true,
                rekeys_references: false,
            },
            Migration {
                version: 14,
                description: "statement lines per vendor and day",
                sql: include_str!(concat!(
                    env!("CARGO_MANIFEST_DIR"),
                    "/migrations/",
                    $backend,
                    "/0014_vendor_days.sql"
                )),
                seeds: false,
                recounts_figures: true,
                rekeys_references: false,
            },
            Migration {
                version: 15,
                description: "vendor credits",
                sql: include_str!(concat!(
                    env!("CARGO_MANIFEST_DIR"),
                    "/migrations/",
                    $backend,
                    "/0015_vendor_credits.sql"
                )),
                seeds: false,
                recounts_figures: false,
                rekeys_references: false,
            },
            Migration {
                version: 16,
                description: "credit applications",
                sql: include_str!(concat!(
                    env!("CARGO_MANIFEST_DIR"),
                    "/migrations/",
                    $backend,
                    "/0016_credit_applications.sql"
                )),
                seeds: false,
                recounts_figures: true,
                rekeys_references: false,
            },
            Migration {
                version: 17,
                description: "bank statements",
                sql: include_str!(concat!(
                    env!("CARGO_MANIFEST_DIR"),
                    "/migrations/",
                    $backend,
                    "/0017_bank_statements.sql"
                )),
                seeds: false,
                recounts_figures: false,
                rekeys_references: false,
            },
            Migration {
                version: 18,
                description: "events",
                sql: include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/migrations/", $backend, "/0018_events.sql")),
                seeds: false,
                recounts_figures: false,
                rekeys_references: false,
            },
            Migration {
                version: 19,
                description: "branches",
                sql: include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/migrations/", $backend, "/0019_branches.sql")),
                seeds: false,
                recounts_figures: false,
                rekeys_references: false,
            },
            Migration {
                version: 20,
                description: "invoice branches",
                sql: include_str!(concat!(
                    env!("CARGO_MANIFEST_DIR"),
                    "/migrations/",
                    $backend,
                    "/0020_invoice_branches.sql"
                )),
                seeds: false,
                recounts_figures: false,
                rekeys_references: false,
            },
            Migration {
                version: 21,
                description: "credit and statement branches",
                sql: include_str!(concat!(
                    env!("CARGO_MANIFEST_DIR"),
                    "/migrations/",
                    $backend,
                    "/0021_credit_statement_branches.sql"
                )),
                seeds: false,
                // Today's recount reads every invoice's and credit's branch: the last migration
                // that recounts must come after the columns it reads (D41, D49).
                recounts_figures: true,
                rekeys_references: false,
            },
            Migration {
                version: 22,
                description: "user branches",
                sql: include_str!(concat!(
                    env!("CARGO_MANIFEST_DIR"),
                    "/migrations/",
                    $backend,
                    "/0022_user_branches.sql"
                )),
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
mod options;
mod postgres;
mod read_pool;
mod schema;
mod sqlite;
mod tasks;
#[cfg(feature = "test-support")]
pub mod testing;

use pharmapay_core::StoreError;

pub use options::{SqliteDurability, StoreOptions};
pub use postgres::PostgresStore;
pub use sqlite::SqliteStore;
pub use statements::{BoundStatement, BoundValue};

pub(crate) use options::{Target, long_reads, target};
pub(crate) use schema::{Lock, Migration, SearchIndex, Table, checksum};
pub(crate) use tasks::to_the_end;

/// A pharmapay store over SQLite or PostgreSQL, as [`SqlxStore::connect`] found it from the URL.
///
/// Each variant is a complete [`Store`](pharmapay_core::Store) (and
/// [`BulkLoadStore`](pharmapay_core::BulkLoadStore)): match once, where the store is opened, and
/// run the engine over the concrete store, so no call pays for choosing a backend. Cloning is
/// cheap; clones share the pools.
#[derive(Clone)]
pub enum SqlxStore {
    /// A SQLite file.
    Sqlite(SqliteStore),
    /// A PostgreSQL database.
    Postgres(PostgresStore),
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
