//! The bare SQL ceilings: the statements the store runs for each endpoint, timed directly
//! through sqlx with the store's connection settings, and nothing else (no HTTP, no JSON, no
//! engine, no decoding of the rows into domain values).
//!
//! The fixed statements are the store's own texts (`pharmapay_store_sqlx::statements`), and the
//! pages built from filters the store's own statements for the same queries ([`store_page`]).
//! The harness checks at every run that the server really sent each of them,
//! so a change in the store cannot silently leave a ceiling measuring another query. Reads run on
//! the reader settings (`query_only`, WAL), writes on the writer's (WAL, `synchronous = FULL`,
//! a 64 MiB page cache, `BEGIN IMMEDIATE`) for SQLite; PostgreSQL uses plain connections at
//! the server's defaults.

use std::str::FromStr;
use std::time::{Duration, Instant};

use pharmapay_benches::stats::{Latencies, per_second};
use pharmapay_core::BusinessCalendar;
use pharmapay_core::figures::day_key;
use pharmapay_core::invoices::InvoiceQuery;
use pharmapay_core::jiff::civil::Date;
use pharmapay_core::jiff::{Timestamp, ToSpan};
use pharmapay_core::reports::aging::AgingBounds;
use pharmapay_core::vendors::VendorQuery;
use pharmapay_store_sqlx::{BoundStatement, BoundValue, PostgresStore, SqliteStore, StoreOptions, statements};

use crate::setup::{Backend, POSTGRES_PROCESS};
use sqlx::postgres::{PgConnectOptions, PgPoolOptions};
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions, SqliteSynchronous};
use sqlx::{PgPool, SqlitePool};

/// The session check every authenticated request makes (`SessionStore::session_state`).
pub const SESSION: &str = statements::SESSION_STATE;

/// One vendor with its totals (`VendorStore::get_vendor`).
pub const GET_VENDOR: &str = statements::VENDOR_BY_ID;

/// A list page the harness times: the query string the endpoint sends, from which the store
/// builds its statement ([`store_page`]), so the ceiling is the store's own SQL.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ListPage {
    /// Every invoice, newest invoice date first, 15 a page, counted from the kept totals (D41).
    InvoicesDefault,
    /// Overdue invoices by pending amount, largest first, counted from the kept open-invoice
    /// counts per due date.
    InvoicesOverdue,
    /// Active vendors by outstanding balance, largest first (10 a page), along the index of the
    /// kept balances.
    VendorsByBalance,
}

impl ListPage {
    /// Every page the harness times.
    pub const ALL: [ListPage; 3] = [ListPage::InvoicesDefault, ListPage::InvoicesOverdue, ListPage::VendorsByBalance];

    /// The path and query string the endpoint sends.
    pub fn path(self) -> &'static str {
        match self {
            ListPage::InvoicesDefault => "/api/invoices",
            ListPage::InvoicesOverdue => "/api/invoices?sortBy=pendingAmount&sortDir=desc&status=Overdue",
            ListPage::VendorsByBalance => "/api/vendors?sortBy=outstandingBalance&sortDir=desc",
        }
    }

    fn params(self) -> Vec<(String, String)> {
        let query = self.path().split_once('?').map_or("", |(_, query)| query);
        query
            .split('&')
            .filter_map(|pair| pair.split_once('='))
            .map(|(name, value)| (name.to_owned(), value.to_owned()))
            .collect()
    }
}

/// The statement the store of `backend` reads `page` with, today starting at `today_start`, as
/// the store builds it.
pub fn store_page(backend: Backend, page: ListPage, today_start: Timestamp) -> Statement {
    let params = page.params();
    let bound = match page {
        ListPage::VendorsByBalance => {
            let query = VendorQuery::from_params(&params).expect("the harness's own parameters are valid");
            match backend {
                Backend::Postgres => PostgresStore::vendor_page_statement(&query),
                _ => SqliteStore::vendor_page_statement(&query),
            }
        }
        _ => {
            let query = InvoiceQuery::from_params(&params).expect("the harness's own parameters are valid");
            match backend {
                Backend::Postgres => PostgresStore::invoice_page_statement(&query, today_start),
                _ => SqliteStore::invoice_page_statement(&query, today_start),
            }
        }
    };
    Statement::bound(bound)
}

/// The dashboard summary: the kept totals and the recent days' figures in one row.
pub const SUMMARY: &str = statements::DASHBOARD_FIGURES;

/// The five active vendors with the largest balances.
pub const TOP_VENDORS: &str = statements::TOP_VENDORS;

/// The five newest invoices.
pub const RECENT_INVOICES: &str = statements::RECENT_INVOICES;

/// The kept figures of the twelve months' days (at most 366 rows), as the store reads them.
pub const MONTHLY: &str = statements::DAY_FIGURES;

/// How the store's aging statement starts (`ReportStore::aging`).
const AGING_PREFIX: &str = "SELECT g.vendor_id, v.name, g.bucket";

/// The day a year before `today`: the past aging's day and the statement's first day.
pub fn year_back(today: Date) -> Date {
    today.checked_sub(365.days()).unwrap_or(today)
}

/// Moves a paid total and returns the invoice as it now stands (`Store::insert_transaction`,
/// first statement).
pub const ADD_PAID: &str = statements::ADD_PAID;
/// The plain paid-total update of the bare insert-plus-update ceiling.
const PLAIN_ADD_PAID: &str = "UPDATE invoices SET paid = paid + $2 WHERE id = $1 AND is_active AND paid <= $3";
/// Inserts the payment.
pub const INSERT_PAYMENT: &str = statements::INSERT_PAYMENT;
/// Records the audit entry.
pub const INSERT_AUDIT: &str = statements::INSERT_AUDIT;

/// A statement with its integer parameters.
#[derive(Clone, Debug)]
pub struct Statement {
    /// The SQL text.
    pub sql: &'static str,
    /// The values of `$1`, `$2` ... in order.
    pub binds: Vec<BoundValue>,
}

impl Statement {
    /// A statement of integer values; the text is kept for the whole run (sqlx caches its
    /// prepared form per connection, keyed by the text, as it does for the store's).
    pub fn new(sql: impl Into<String>, binds: Vec<i64>) -> Self {
        Self {
            sql: String::leak(sql.into()),
            binds: binds.into_iter().map(|value| BoundValue::Int(Some(value))).collect(),
        }
    }

    /// A statement as the store builds it.
    pub fn bound(statement: BoundStatement) -> Self {
        Self { sql: String::leak(statement.sql), binds: statement.values }
    }
}

/// What the bare statements of one endpoint need to know.
pub struct Context {
    /// The signed-in admin (for the session check).
    pub admin_id: i64,
    /// The vendor read by `GET /api/vendors/:id`.
    pub vendor_id: i64,
    /// The business calendar (from the `TimeZone` setting).
    pub calendar: BusinessCalendar,
    /// Now.
    pub now: Timestamp,
    /// The statements the server logged while each endpoint was sent once.
    pub logged: Vec<String>,
}

impl Context {
    fn micros(instant: Timestamp) -> i64 {
        instant.as_microsecond()
    }

    /// The first instant of today in the business calendar.
    pub fn today_start(&self) -> Timestamp {
        self.calendar.start_of(self.calendar.date_of(self.now))
    }

    /// The key of the first of the dashboard's thirty recent days.
    pub fn recent_from(&self) -> i64 {
        let today = self.calendar.date_of(self.now);
        day_key(today.checked_sub(29.days()).unwrap_or(today))
    }

    /// The keys of the first and the last day of the dashboard's twelve months.
    pub fn month_days(&self) -> Vec<i64> {
        let months = self.calendar.last_twelve_months(self.now);
        let first = months.last().map_or(0, |window| day_key(window.month));
        let last = months.first().map_or(0, |window| day_key(window.month.last_of_month()));
        vec![first, last]
    }

    /// The aging of a year back as the store sends it (its text taken from the server's own
    /// log, since the store builds it for the day's bucket bounds), with the bounds of that
    /// day as core computes them: the first instant after the day, then each bucket's lower
    /// due-date bound, and the open upper bound of the later payments.
    pub fn aging_statement(&self) -> Option<Statement> {
        let text = self.logged.iter().find(|statement| statement.starts_with(AGING_PREFIX))?;
        let bounds = AgingBounds::for_day(&self.calendar, year_back(self.calendar.date_of(self.now)));
        let mut binds = vec![Self::micros(bounds.counts_before)];
        binds.extend(bounds.due_from.iter().map(|from| Self::micros(*from)));
        // The later payments' open upper bound.
        binds.push(i64::MAX);
        Some(Statement::new(text.clone(), binds))
    }

    /// The session check.
    pub fn session(&self) -> Statement {
        Statement::new(SESSION, vec![self.admin_id])
    }
}

/// A database to time statements on.
#[derive(Clone)]
pub enum Database {
    /// A SQLite file: the reader pool's settings and the writer's.
    Sqlite {
        /// Connection settings of the store's readers.
        reader: SqliteConnectOptions,
        /// Connection settings of the store's writer.
        writer: SqliteConnectOptions,
    },
    /// A PostgreSQL database.
    Postgres(PgConnectOptions),
}

#[derive(Clone)]
enum Pool {
    Sqlite(SqlitePool),
    Postgres(PgPool),
}

impl Database {
    /// The database at `url`, with the store's settings (SQLite: WAL, `synchronous = FULL`,
    /// foreign keys, a 5 s busy timeout; readers `query_only`, the writer a 64 MiB cache).
    ///
    /// # Errors
    /// When the URL cannot be read.
    pub fn open(url: &str) -> Result<Self, String> {
        if url.starts_with("postgres") {
            let options = PgConnectOptions::from_str(url).map_err(|error| error.to_string())?;
            return Ok(Database::Postgres(options.application_name("pharmapay-bench")));
        }
        let base = SqliteConnectOptions::from_str(url)
            .map_err(|error| error.to_string())?
            .journal_mode(SqliteJournalMode::Wal)
            .synchronous(SqliteSynchronous::Full)
            .foreign_keys(true)
            .busy_timeout(Duration::from_secs(5));
        Ok(Database::Sqlite {
            reader: base.clone().pragma("query_only", "ON"),
            writer: base.pragma("cache_size", "-65536"),
        })
    }

    /// The writes' pool: SQLite's one writer connection, or a pool of the store's size on
    /// PostgreSQL (sqlx's pool, as the store's writes use it).
    async fn writer_pool(&self) -> Result<Pool, String> {
        match self {
            Database::Sqlite { writer, .. } => SqlitePoolOptions::new()
                .max_connections(1)
                .test_before_acquire(false)
                .max_lifetime(None)
                .connect_with(writer.clone())
                .await
                .map(Pool::Sqlite)
                .map_err(|error| error.to_string()),
            Database::Postgres(options) => PgPoolOptions::new()
                .max_connections(self.store_pool_size())
                .connect_with(options.clone())
                .await
                .map(Pool::Postgres)
                .map_err(|error| error.to_string()),
        }
    }

    /// The command name of the database's own processes: PostgreSQL's; SQLite runs inside
    /// its caller.
    fn process(&self) -> Option<&'static str> {
        match self {
            Database::Sqlite { .. } => None,
            Database::Postgres(_) => Some(POSTGRES_PROCESS),
        }
    }

    /// How many connections the store's read pool has by default.
    pub fn store_pool_size(&self) -> u32 {
        match self {
            Database::Sqlite { .. } => StoreOptions::SQLITE_READERS,
            Database::Postgres(_) => StoreOptions::POSTGRES_CONNECTIONS,
        }
    }
}

/// A bare SQL figure: the single-connection latency and the rate a saturated pool reaches.
#[derive(Clone, Copy, Debug, Default)]
pub struct Ceiling {
    /// Latency of the whole statement list, one connection, back to back.
    pub latencies: Latencies,
    /// Statement lists per second with concurrent callers on a pool of the store's size.
    pub rps: f64,
    /// Processor time this process (its Tokio threads and, for SQLite, the driver's connection
    /// threads) used per statement list in the rate's window, in microseconds. The database
    /// server's own time (PostgreSQL's processes) is in neither this nor the server's figure.
    pub cpu_us: Option<f64>,
    /// PostgreSQL's processes' time per statement list in the same window (`None` on SQLite).
    pub database_cpu_us: Option<f64>,
}

/// How long to time each statement list.
#[derive(Clone, Copy, Debug)]
pub struct SqlTiming {
    /// Time spent back to back on one connection (at least seven runs).
    pub latency_budget: Duration,
    /// The window of the rate measurement.
    pub rate_window: Duration,
}

/// Open connections lent to concurrent callers the way the store lends its readers
/// (`read_pool.rs` in `pharmapay-store-sqlx`): the most recently returned idle one, with no
/// ping on the way out or back. sqlx's pool pings every connection it takes back, and on
/// PostgreSQL every one it lends; the store sends neither, so a ceiling through the pool would
/// time statements the server does not send.
struct Lender<C> {
    permits: tokio::sync::Semaphore,
    idle: std::sync::Mutex<Vec<C>>,
}

/// A lent connection; it goes back to the idle list when dropped, even by a caller that
/// stopped waiting mid-statement (the driver finishes what was sent before the next statement).
struct Lent<'a, C> {
    conn: Option<C>,
    lender: &'a Lender<C>,
    _permit: tokio::sync::SemaphorePermit<'a>,
}

impl<C> Lender<C> {
    fn new(connections: Vec<C>) -> Self {
        Self { permits: tokio::sync::Semaphore::new(connections.len()), idle: std::sync::Mutex::new(connections) }
    }

    async fn lend(&self) -> Result<Lent<'_, C>, String> {
        let permit = self.permits.acquire().await.map_err(|error| error.to_string())?;
        let conn = self.idle.lock().unwrap_or_else(std::sync::PoisonError::into_inner).pop();
        let conn = conn.ok_or("a permit without an idle connection")?;
        Ok(Lent { conn: Some(conn), lender: self, _permit: permit })
    }
}

impl<C> Lent<'_, C> {
    fn conn(&mut self) -> &mut C {
        self.conn.as_mut().expect("held until dropped")
    }
}

impl<C> Drop for Lent<'_, C> {
    fn drop(&mut self) {
        if let Some(conn) = self.conn.take() {
            self.lender.idle.lock().unwrap_or_else(std::sync::PoisonError::into_inner).push(conn);
        }
    }
}

#[derive(Clone)]
enum Readers {
    Sqlite(std::sync::Arc<Lender<sqlx::SqliteConnection>>),
    Postgres(std::sync::Arc<Lender<sqlx::PgConnection>>),
}

impl Database {
    /// `size` reader connections with the store's reader settings.
    async fn readers(&self, size: u32) -> Result<Readers, String> {
        use sqlx::ConnectOptions;
        async fn open<O: ConnectOptions>(options: &O, size: u32) -> Result<Vec<O::Connection>, String>
        where
            O::Connection: Sized,
        {
            let mut connections = Vec::new();
            for _ in 0..size {
                connections.push(options.connect().await.map_err(|error| error.to_string())?);
            }
            Ok(connections)
        }
        Ok(match self {
            Database::Sqlite { reader, .. } => {
                Readers::Sqlite(std::sync::Arc::new(Lender::new(open(reader, size).await?)))
            }
            Database::Postgres(options) => {
                Readers::Postgres(std::sync::Arc::new(Lender::new(open(options, size).await?)))
            }
        })
    }
}

/// Times the statement list `statements` (a read): median and 99th percentile on one
/// connection, then the rate with twice the store's pool size of callers sharing that many
/// connections, lent as the store lends its readers.
///
/// # Errors
/// When connecting or a statement fails.
pub async fn time_reads(db: &Database, statements: &[Statement], timing: SqlTiming) -> Result<Ceiling, String> {
    let readers = db.readers(db.store_pool_size()).await?;
    let statements = std::sync::Arc::new(statements.to_vec());
    let one = move || {
        let (readers, statements) = (readers.clone(), std::sync::Arc::clone(&statements));
        async move {
            match readers {
                Readers::Sqlite(lender) => run_sqlite(lender.lend().await?.conn(), &statements).await,
                Readers::Postgres(lender) => run_postgres(lender.lend().await?.conn(), &statements).await,
            }
        }
    };
    let latencies = sequential(timing.latency_budget, &one).await?;
    let tasks = 2 * db.store_pool_size() as usize;
    let (rps, cpu_us, database_cpu_us) = concurrent(tasks, timing.rate_window, latencies, db.process(), one).await?;
    Ok(Ceiling { latencies, rps, cpu_us, database_cpu_us })
}

async fn close(pool: Pool) {
    match pool {
        Pool::Sqlite(pool) => pool.close().await,
        Pool::Postgres(pool) => pool.close().await,
    }
}

/// Runs each statement of a list on one connection, fetching every row (the connection types of
/// the two databases differ, so the body is written once here).
macro_rules! run_statements {
    ($conn:expr, $statements:expr) => {{
        for statement in $statements {
            let mut query = sqlx::query(statement.sql);
            for value in &statement.binds {
                query = match value {
                    BoundValue::Int(value) => query.bind(*value),
                    BoundValue::Bool(value) => query.bind(*value),
                    BoundValue::Text(value) => query.bind(value.clone()),
                };
            }
            query.fetch_all(&mut *$conn).await.map_err(|error| format!("{error} in {}", statement.sql))?;
        }
        Ok(())
    }};
}

async fn run_sqlite(conn: &mut sqlx::SqliteConnection, statements: &[Statement]) -> Result<(), String> {
    run_statements!(conn, statements)
}

async fn run_postgres(conn: &mut sqlx::PgConnection, statements: &[Statement]) -> Result<(), String> {
    run_statements!(conn, statements)
}

/// Runs `once` back to back: a warm-up run, then for `budget` (at least seven runs).
async fn sequential(budget: Duration, mut once: impl AsyncFnMut() -> Result<(), String>) -> Result<Latencies, String> {
    once().await?;
    let started = Instant::now();
    let mut samples = Vec::new();
    while samples.len() < 7 || started.elapsed() < budget {
        let sent = Instant::now();
        once().await?;
        samples.push(sent.elapsed().as_micros() as u64);
    }
    Ok(Latencies::of(samples))
}

/// Runs `make()` from `tasks` callers at once for `window` after a warm-up, and returns the
/// completions per second inside the window, with this process's processor time per completion
/// and that of the database's processes named `database`, if any. Slow statement lists (a
/// median above a tenth of the window) get a window long enough for several completions per
/// caller.
async fn concurrent<F, Fut>(
    tasks: usize,
    window: Duration,
    latencies: Latencies,
    database: Option<&'static str>,
    make: F,
) -> Result<(f64, Option<f64>, Option<f64>), String>
where
    F: Fn() -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<(), String>> + Send + 'static,
{
    let median = Duration::from_micros(latencies.p50_us);
    let window = window.max(median * 3 * tasks as u32 / 2);
    let warmup = (median * 2).max(Duration::from_millis(300));
    let started = Instant::now();
    let window_start = started + warmup;
    let window_end = window_start + window;
    let make = std::sync::Arc::new(make);
    let sampler = tokio::spawn(crate::client::cpu_in_window(None, window_start, window_end));
    let database =
        database.map(|name| tokio::spawn(crate::client::cpu_of_all_in_window(name, window_start, window_end)));
    let mut handles = Vec::new();
    for _ in 0..tasks {
        let make = std::sync::Arc::clone(&make);
        handles.push(tokio::spawn(async move {
            let mut completed = 0u64;
            while Instant::now() < window_end {
                let run = tokio::time::timeout_at(tokio::time::Instant::from_std(window_end), make()).await;
                match run {
                    Err(_) => break,
                    Ok(result) => result?,
                }
                let done = Instant::now();
                if done >= window_start && done < window_end {
                    completed += 1;
                }
            }
            Ok::<u64, String>(completed)
        }));
    }
    let mut completed = 0;
    for handle in handles {
        completed += handle.await.map_err(|error| error.to_string())??;
    }
    let per_completion = |used: Duration| (completed > 0).then(|| used.as_secs_f64() * 1e6 / completed as f64);
    let cpu_us = sampler.await.ok().flatten().and_then(per_completion);
    let database_cpu_us = match database {
        Some(database) => database.await.ok().and_then(per_completion),
        None => None,
    };
    Ok((per_second(completed, window), cpu_us, database_cpu_us))
}

/// Which write transaction to time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Write {
    /// The ceiling: the paid-total update and the payment insert, committed.
    InsertAndUpdate,
    /// Every statement the store's `insert_transaction` runs: update, insert, audit entry and
    /// reading the payment back, committed.
    StoreSequence,
}

/// Times one payment per database transaction on `invoice_ids` (round robin), at the store's
/// durability: latency on one connection, then the rate with eight callers (SQLite queues them
/// for its one writer connection, as the store does).
///
/// # Errors
/// When connecting or a statement fails.
pub async fn time_writes(
    db: &Database,
    write: Write,
    invoice_ids: &[i64],
    admin_id: i64,
    timing: SqlTiming,
) -> Result<Ceiling, String> {
    let pool = db.writer_pool().await?;
    let ids = std::sync::Arc::new(invoice_ids.to_vec());
    let counter = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let one = {
        let shared = pool.clone();
        move || {
            let n = counter.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            let invoice_id = ids[n % ids.len()];
            let pool = shared.clone();
            async move {
                match pool {
                    Pool::Sqlite(pool) => {
                        let mut db_tx = pool.begin_with("BEGIN IMMEDIATE").await.map_err(|error| error.to_string())?;
                        payment_sqlite(&mut db_tx, write, invoice_id, admin_id).await?;
                        db_tx.commit().await.map_err(|error| error.to_string())
                    }
                    Pool::Postgres(pool) => {
                        let mut db_tx = pool.begin().await.map_err(|error| error.to_string())?;
                        payment_postgres(&mut db_tx, write, invoice_id, admin_id).await?;
                        db_tx.commit().await.map_err(|error| error.to_string())
                    }
                }
            }
        }
    };
    let latencies = sequential(timing.latency_budget, &one).await?;
    let tasks = 8;
    let (rps, cpu_us, database_cpu_us) = concurrent(tasks, timing.rate_window, latencies, db.process(), one).await?;
    close(pool).await;
    Ok(Ceiling { latencies, rps, cpu_us, database_cpu_us })
}

/// A payment of 0.01 (100 ten-thousandths), dated 2024-05-10, as the harness posts them.
const PAYMENT_SCALED: i64 = 100;
const PAYMENT_DATE_MICROS: i64 = 1_715_299_200_000_000;

fn max_paid_before(scaled: i64) -> i64 {
    let max = pharmapay_core::Amount::try_from(pharmapay_core::money::MAX_AMOUNT)
        .map(pharmapay_core::Amount::to_scaled)
        .unwrap_or(i64::MAX);
    max - scaled
}

fn now_micros() -> i64 {
    Timestamp::now().as_microsecond()
}

/// Defines `$name`, one payment's statements on a connection of `$connection`: the same
/// statements for each database, which sqlx types apart.
macro_rules! payment_fn {
    ($name:ident, $connection:ty) => {
        async fn $name(conn: &mut $connection, write: Write, invoice_id: i64, admin_id: i64) -> Result<(), String> {
            let at = now_micros();
            let changed = if write == Write::StoreSequence {
                // The store's statement returns the invoice whatever its state; it counts when active.
                let rows = sqlx::query(ADD_PAID)
                    .bind(invoice_id)
                    .bind(PAYMENT_SCALED)
                    .fetch_all(&mut *conn)
                    .await
                    .map_err(|error| error.to_string())?;
                rows.iter().filter(|row| sqlx::Row::try_get::<bool, _>(*row, "is_active").unwrap_or(false)).count()
                    as u64
            } else {
                sqlx::query(PLAIN_ADD_PAID)
                    .bind(invoice_id)
                    .bind(PAYMENT_SCALED)
                    .bind(max_paid_before(PAYMENT_SCALED))
                    .execute(&mut *conn)
                    .await
                    .map_err(|error| error.to_string())?
                    .rows_affected()
            };
            if changed != 1 {
                return Err(format!("invoice {} is not active", invoice_id));
            }
            let row = sqlx::query(INSERT_PAYMENT)
                .bind(invoice_id)
                .bind(PAYMENT_SCALED)
                .bind(PAYMENT_DATE_MICROS)
                .bind("UPI")
                .bind(None::<String>)
                .bind(at)
                // No reference, no key, no vendor payment.
                .bind(None::<String>)
                .bind(None::<String>)
                .bind(None::<i64>)
                .fetch_one(&mut *conn)
                .await
                .map_err(|error| error.to_string())?;
            if write == Write::StoreSequence {
                let id: i64 = sqlx::Row::try_get(&row, 0).map_err(|error| error.to_string())?;
                sqlx::query(INSERT_AUDIT)
                    .bind(at)
                    .bind(Some(admin_id))
                    .bind("create")
                    .bind("Transaction")
                    .bind("transaction")
                    .bind(Some(id))
                    .bind(None::<String>)
                    .bind(Some(format!("{{\"invoiceId\":{},\"amount\":\"0.01\"}}", invoice_id)))
                    .execute(&mut *conn)
                    .await
                    .map_err(|error| error.to_string())?;
            }
            Ok(())
        }
    };
}

payment_fn!(payment_sqlite, sqlx::SqliteConnection);
payment_fn!(payment_postgres, sqlx::PgConnection);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_dashboard_reads_day_keys() {
        let context = Context {
            admin_id: 1,
            vendor_id: 2,
            calendar: BusinessCalendar::utc(),
            now: "2024-05-20T10:00:00Z".parse().unwrap(),
            logged: vec!["SELECT 1".into(), format!("{AGING_PREFIX}, g.owed_high FROM x WHERE a < $1")],
        };
        assert_eq!(context.recent_from(), 20_240_421);
        assert_eq!(context.month_days(), vec![20_230_601, 20_240_531]);
        let aging = context.aging_statement().expect("the logged aging statement");
        assert!(aging.sql.starts_with(AGING_PREFIX));
        let day = |text: &str| text.parse::<Timestamp>().unwrap().as_microsecond();
        let ints: Vec<i64> = aging
            .binds
            .iter()
            .map(|value| match value {
                BoundValue::Int(Some(value)) => *value,
                other => panic!("an aging bound is an integer: {other:?}"),
            })
            .collect();
        assert_eq!(
            ints,
            [
                day("2023-05-22T00:00:00Z"),
                day("2023-05-21T00:00:00Z"),
                day("2023-04-21T00:00:00Z"),
                day("2023-03-22T00:00:00Z"),
                day("2023-02-20T00:00:00Z"),
                day("2022-11-22T00:00:00Z"),
                i64::MAX,
            ],
            "a year back is 21 May 2023; the bounds follow AgingBounds"
        );
    }

    #[test]
    fn a_lent_connection_goes_back_even_when_its_borrower_stops_waiting() {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap();
        runtime.block_on(async {
            let lender = Lender::new(vec![1, 2]);
            let mut first = lender.lend().await.unwrap();
            assert_eq!(*first.conn(), 2, "the most recently returned connection first");
            let second = lender.lend().await.unwrap();
            // Both are out: a third borrower waits, and gives up.
            let waited = tokio::time::timeout(Duration::from_millis(20), lender.lend()).await;
            assert!(waited.is_err(), "no third connection to lend");
            drop(second);
            drop(first);
            // A borrower dropped while it holds a connection (a timed-out statement) returns it.
            let abandoned = async {
                let _held = lender.lend().await.unwrap();
                std::future::pending::<()>().await;
            };
            assert!(tokio::time::timeout(Duration::from_millis(20), abandoned).await.is_err());
            let (mut a, mut b) = (lender.lend().await.unwrap(), lender.lend().await.unwrap());
            let mut both = [*a.conn(), *b.conn()];
            both.sort_unstable();
            assert_eq!(both, [1, 2], "both connections are back after every borrower ended");
        });
    }

    #[test]
    fn the_payment_date_is_the_tenth_of_may_2024() {
        let date: Timestamp = "2024-05-10T00:00:00Z".parse().unwrap();
        assert_eq!(date.as_microsecond(), PAYMENT_DATE_MICROS);
    }
}
