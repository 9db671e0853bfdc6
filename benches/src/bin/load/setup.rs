//! Getting a server ready to measure: the prepared databases (seeded with `pharmapay
//! seed-demo`: afresh at S on every run, once at L and reused while complete), the server
//! process itself, and what the
//! requests need from it (a token, a vendor, active invoices, the busiest vendors and their
//! open invoices, twenty extra users for the login load). Also the hidden `memory-server`
//! subcommand: the real server's code over the memory store, seeded in-process, since the
//! memory store cannot be prepared ahead.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::str::FromStr;
use std::time::{Duration, Instant};

use hyper::{Method, StatusCode};
use pharmapay_core::jiff::Timestamp;
use pharmapay_core::jiff::civil::Date;
use pharmapay_core::{BusinessCalendar, EngineOptions, PharmaPay, SystemClock};
use pharmapay_server::demo::{self, DemoSize};
use pharmapay_server::{DEMO_ADMIN_EMAIL, DEMO_ADMIN_PASSWORD};
use pharmapay_store_memory::MemoryStore;
use serde_json::{Value, json};
use sqlx::Row;

use crate::children::{self, Child};
use crate::client::call;

/// The command name of PostgreSQL's processes, whose processor time the harness reads.
pub const POSTGRES_PROCESS: &str = "postgres";

/// Where the data lives.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, clap::ValueEnum)]
pub enum Backend {
    /// The memory store, seeded inside the server process at start.
    Memory,
    /// A SQLite file under the data directory.
    Sqlite,
    /// A PostgreSQL database on 127.0.0.1.
    Postgres,
}

impl Backend {
    /// The command name of the database's own processes, where it runs in processes apart
    /// from the server (SQLite runs inside it, the memory store is it).
    pub fn database_process(self) -> Option<&'static str> {
        match self {
            Backend::Postgres => Some(POSTGRES_PROCESS),
            Backend::Memory | Backend::Sqlite => None,
        }
    }

    /// Its name in tables.
    pub fn name(self) -> &'static str {
        match self {
            Backend::Memory => "memory",
            Backend::Sqlite => "SQLite",
            Backend::Postgres => "PostgreSQL",
        }
    }
}

/// The demo scales.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, clap::ValueEnum)]
pub enum Scale {
    /// 300 vendors, 30,000 invoices, 90,000 payments.
    #[value(name = "S", alias = "s")]
    Small,
    /// 10,000 vendors, 1,000,000 invoices, 3,000,000 payments.
    #[value(name = "L", alias = "l")]
    Large,
}

impl Scale {
    /// `S` or `L`.
    pub fn name(self) -> &'static str {
        match self {
            Scale::Small => "S",
            Scale::Large => "L",
        }
    }

    /// The demo data of this scale.
    pub fn size(self) -> DemoSize {
        match self {
            Scale::Small => DemoSize::SMALL,
            Scale::Large => DemoSize::LARGE,
        }
    }
}

/// Where the prepared databases are and how to make them.
pub struct Places {
    /// The `pharmapay` binary.
    pub server_bin: PathBuf,
    /// The directory of the SQLite files.
    pub data_dir: PathBuf,
    /// `postgres://user@127.0.0.1:5432`, without a database.
    pub pg_base: String,
    /// A database that exists, to create and drop the benchmark databases from.
    pub pg_admin_db: String,
}

/// A prepared database.
pub struct Prepared {
    /// The URL the server opens.
    pub url: String,
    /// How long `seed-demo` took when this run had to load the data.
    pub seeded_in: Option<Duration>,
}

/// Counts vendors, invoices and payments over a connection of either database.
macro_rules! counts {
    ($conn:expr) => {{
        let sql = "SELECT (SELECT COUNT(*) FROM vendors), (SELECT COUNT(*) FROM invoices), \
                   (SELECT COUNT(*) FROM transactions)";
        match sqlx::query(sql).fetch_one(&mut $conn).await {
            Ok(row) => match (row.try_get::<i64, _>(0), row.try_get::<i64, _>(1), row.try_get::<i64, _>(2)) {
                (Ok(vendors), Ok(invoices), Ok(payments)) => Some((vendors, invoices, payments)),
                _ => None,
            },
            Err(_) => None,
        }
    }};
}

impl Places {
    fn sqlite_path(&self, scale: Scale) -> PathBuf {
        self.data_dir.join(format!("{}.db", scale.name().to_ascii_lowercase()))
    }

    fn pg_database(scale: Scale) -> String {
        format!("pharmapay_bench_{}", scale.name().to_ascii_lowercase())
    }

    /// The URL of the database of `backend` at `scale` (`None` for memory).
    pub fn url(&self, backend: Backend, scale: Scale) -> Option<String> {
        match backend {
            Backend::Memory => None,
            Backend::Sqlite => Some(format!("sqlite:{}", self.sqlite_path(scale).display())),
            Backend::Postgres => Some(format!("{}/{}", self.pg_base, Self::pg_database(scale))),
        }
    }

    /// Makes sure the database of `backend` at `scale` holds the whole demo data. At L it is
    /// reused when its row counts reach the scale's (seeding takes minutes there), after
    /// [`vacuum_without_autovacuum`] on PostgreSQL; otherwise,
    /// and always at S, it is started over and `seed-demo` runs. A run's payments and sign-ins
    /// stay in its database (about 70,000 payments at S, beside the 90,000 seeded), so a reused
    /// S database would measure more data, and more dead rows, at every run; seeding S takes a
    /// few seconds.
    ///
    /// # Errors
    /// When the database cannot be reached, created or seeded.
    pub async fn prepare(&self, backend: Backend, scale: Scale) -> Result<Prepared, String> {
        let Some(url) = self.url(backend, scale) else {
            return Ok(Prepared { url: "memory:".into(), seeded_in: None });
        };
        if scale == Scale::Large && self.complete(backend, scale, &url).await {
            if backend == Backend::Postgres {
                vacuum_without_autovacuum(&url).await?;
            }
            return Ok(Prepared { url, seeded_in: None });
        }
        match backend {
            Backend::Memory => {}
            Backend::Sqlite => {
                std::fs::create_dir_all(&self.data_dir).map_err(|error| error.to_string())?;
                let path = self.sqlite_path(scale);
                for suffix in ["", "-wal", "-shm"] {
                    let file = PathBuf::from(format!("{}{suffix}", path.display()));
                    if file.exists() {
                        std::fs::remove_file(&file).map_err(|error| format!("{}: {error}", file.display()))?;
                    }
                }
            }
            Backend::Postgres => {
                let admin = format!("{}/{}", self.pg_base, self.pg_admin_db);
                let mut conn = <sqlx::PgConnection as sqlx::Connection>::connect(&admin)
                    .await
                    .map_err(|error| format!("PostgreSQL at {admin}: {error}"))?;
                let name = Self::pg_database(scale);
                for sql in [format!("DROP DATABASE IF EXISTS {name}"), format!("CREATE DATABASE {name}")] {
                    sqlx::raw_sql(sqlx::AssertSqlSafe(sql))
                        .execute(&mut conn)
                        .await
                        .map_err(|error| error.to_string())?;
                }
            }
        }
        let size = scale.size();
        eprintln!("seeding {} {}: {url} (this takes minutes at L)", backend.name(), scale.name());
        let started = Instant::now();
        let status = Command::new(&self.server_bin)
            .args(["seed-demo", "--database-url", &url, "--log", "warn"])
            .args(["--vendors", &size.vendors.to_string(), "--invoices", &size.invoices.to_string()])
            .args(["--payments", &size.payments.to_string(), "--seed", &size.seed.to_string()])
            .status()
            .map_err(|error| format!("could not run {}: {error}", self.server_bin.display()))?;
        if !status.success() {
            return Err(format!("seed-demo failed ({status}) for {url}"));
        }
        let seeded_in = started.elapsed();
        eprintln!("seeded {} {} in {:.1} s", backend.name(), scale.name(), seeded_in.as_secs_f64());
        Ok(Prepared { url, seeded_in: Some(seeded_in) })
    }

    /// True when the database exists and holds at least the scale's rows.
    async fn complete(&self, backend: Backend, scale: Scale, url: &str) -> bool {
        let size = scale.size();
        let counts = match backend {
            Backend::Memory => return true,
            Backend::Sqlite => {
                if !self.sqlite_path(scale).exists() {
                    return false;
                }
                let Ok(options) = sqlx::sqlite::SqliteConnectOptions::from_str(url) else { return false };
                let Ok(mut conn) =
                    <sqlx::SqliteConnection as sqlx::Connection>::connect_with(&options.read_only(true)).await
                else {
                    return false;
                };
                counts!(conn)
            }
            Backend::Postgres => {
                let Ok(mut conn) = <sqlx::PgConnection as sqlx::Connection>::connect(url).await else { return false };
                counts!(conn)
            }
        };
        matches!(counts, Some((vendors, invoices, payments))
            if vendors >= size.vendors as i64 && invoices >= size.invoices as i64 && payments >= size.payments as i64)
    }
}

/// Vacuums a reused PostgreSQL database when its server runs with `autovacuum` off, as
/// autovacuum would have done after the payments of earlier runs. Every payment rewrites its
/// invoice's and its vendor's rows; without vacuuming, the dead versions stay in the tables and
/// their indexes, and each run would measure more of them than the last (at L, after two runs
/// of the payment rows, a vendor search took 4.4 ms against 1.5 ms once vacuumed). The server
/// warns about such a setting at start, and the README asks for autovacuum on. The store
/// reads the setting and vacuums its own tables, as it does after a bulk load.
async fn vacuum_without_autovacuum(url: &str) -> Result<(), String> {
    let store = pharmapay_store_sqlx::PostgresStore::connect(url)
        .await
        .map_err(|error| format!("PostgreSQL at {url}: {error}"))?;
    let facts = store.facts().await.map_err(|error| error.to_string())?;
    if facts.iter().any(|(name, value)| *name == "autovacuum" && value == "off") {
        let started = Instant::now();
        store.analyze().await.map_err(|error| format!("VACUUM: {error}"))?;
        eprintln!(
            "autovacuum is off on this PostgreSQL server: vacuumed the reused database in {:.1} s, as autovacuum would have",
            started.elapsed().as_secs_f64()
        );
    }
    store.close().await;
    Ok(())
}

/// How the server under test logs: quiet (warnings, and the line with its address), or with
/// every SQL statement (to check the bare statements against what the store sends).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Logging {
    /// Warnings only: what is measured.
    Quiet,
    /// Every SQL statement too: for the check only, never measured.
    Statements,
}

/// Starts the server under test on 127.0.0.1 with an ephemeral port.
///
/// # Errors
/// When it does not start.
pub fn start_server(
    places: &Places,
    backend: Backend,
    scale: Scale,
    url: &str,
    logging: Logging,
) -> Result<(Child, SocketAddr), String> {
    let log = match logging {
        Logging::Quiet => "warn,pharmapay_server=info",
        Logging::Statements => "warn,pharmapay_server=info,sqlx::query=debug",
    };
    let (command, limit) = match backend {
        Backend::Memory => {
            let mut command = Command::new(std::env::current_exe().map_err(|error| error.to_string())?);
            command.args(["memory-server", "--scale", scale.name(), "--log", log]);
            (command, Duration::from_secs(1800))
        }
        Backend::Sqlite | Backend::Postgres => {
            let mut command = Command::new(&places.server_bin);
            command.args(["--database-url", url, "--listen", "127.0.0.1:0", "--log", log]);
            (command, Duration::from_secs(120))
        }
    };
    Child::spawn_server(&format!("pharmapay {} {}", backend.name(), scale.name()), command, limit)
}

/// The password of the `n`th extra user made for the login load.
fn bench_user(n: usize) -> (String, String) {
    (format!("bench-login-{n:02}@example.com"), format!("bench-password-{n:02}"))
}

/// What the requests need from a running server.
pub struct Fixture {
    /// The admin's token.
    pub token: String,
    /// The admin's id.
    pub admin_id: i64,
    /// The vendor `GET /api/vendors/:id` reads.
    pub vendor_id: i64,
    /// Active invoices that payments go to.
    pub invoice_ids: Vec<i64>,
    /// Twenty users (email, password), one per login connection.
    pub users: Vec<(String, String)>,
    /// The business calendar the server uses.
    pub calendar: BusinessCalendar,
    /// The vendor with the most invoices among those owed the most, whose statement is read.
    pub busiest_vendor_id: i64,
    /// Vendors with ten open invoices each, which vendor payments spread over (D31).
    pub vendor_payments: Vec<(i64, Vec<i64>)>,
    /// Accepted credits of those vendors, [`CREDITS_PER_VENDOR`] each, with the vendor's ten
    /// invoices: each credit application of a run goes to a credit of its own, as a pharmacy sets
    /// each credit note against a few bills (D44).
    pub credits: Vec<(i64, Vec<i64>)>,
    /// Pages of 100 lines in that vendor's statement over the year to today (D43).
    pub statement_pages: u64,
}

impl Fixture {
    /// The path of the busiest vendor's statement over the year to `today`, with `extra`
    /// parameters.
    pub fn year_statement(&self, today: Date, extra: &str) -> String {
        format!(
            "/api/vendors/{}/statement?fromDate={}&toDate={today}{extra}",
            self.busiest_vendor_id,
            crate::sql::year_back(today)
        )
    }
}

/// Signs the demo admin in and gathers the [`Fixture`]; creates the twenty login users when
/// they are missing.
///
/// # Errors
/// When a request fails.
pub async fn fixture(addr: SocketAddr) -> Result<Fixture, String> {
    let (admin_token, admin_id) = login(addr, DEMO_ADMIN_EMAIL, DEMO_ADMIN_PASSWORD).await?;
    let token = Some(admin_token.as_str());
    let zone = match call(addr, Method::GET, "/api/settings/TimeZone", token, None).await? {
        (StatusCode::OK, setting) => setting["value"].as_str().unwrap_or("UTC").to_owned(),
        _ => "UTC".to_owned(),
    };
    let calendar = BusinessCalendar::parse(&zone).unwrap_or_else(|_| BusinessCalendar::utc());
    let vendors = expect_ok(call(addr, Method::GET, "/api/vendors?pageSize=100", token, None).await?, "vendors")?;
    let items = vendors["items"].as_array().cloned().unwrap_or_default();
    let vendor_id = items.get(items.len() / 2).and_then(|vendor| vendor["id"].as_i64()).ok_or("no vendors")?;
    let invoices =
        expect_ok(call(addr, Method::GET, "/api/invoices?isActive=true&pageSize=100", token, None).await?, "invoices")?;
    let invoice_ids: Vec<i64> = invoices["items"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|invoice| invoice["isActive"].as_bool() == Some(true))
        .filter_map(|invoice| invoice["id"].as_i64())
        .collect();
    if invoice_ids.is_empty() {
        return Err("no active invoices".into());
    }
    // The vendors owed the most: the busiest reads the statement, eight take vendor payments.
    let top = expect_ok(call(addr, Method::GET, "/api/dashboard/top-vendors?limit=8", token, None).await?, "top")?;
    let top: Vec<(i64, i64)> = top
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|vendor| Some((vendor["vendorId"].as_i64()?, vendor["totalInvoices"].as_i64()?)))
        .collect();
    let busiest_vendor_id =
        top.iter().max_by_key(|(_, invoices)| *invoices).map(|(id, _)| *id).ok_or("no top vendor")?;
    let mut vendor_payments = Vec::new();
    for (vendor, _) in &top {
        let path =
            format!("/api/invoices?vendorId={vendor}&isActive=true&sortBy=pendingAmount&sortDir=desc&pageSize=10");
        let page = expect_ok(call(addr, Method::GET, &path, token, None).await?, "a vendor's invoices")?;
        let ids: Vec<i64> = page["items"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|invoice| invoice["pendingAmount"].as_f64().is_some_and(|pending| pending >= 300.0))
            .filter_map(|invoice| invoice["id"].as_i64())
            .collect();
        if ids.len() == 10 {
            vendor_payments.push((*vendor, ids));
        }
    }
    if vendor_payments.is_empty() {
        return Err("no vendor with ten open invoices for the vendor payments".into());
    }
    let credits = accepted_credits(addr, &admin_token, &calendar, &vendor_payments).await?;
    let mut fixture = Fixture {
        token: admin_token.clone(),
        admin_id,
        vendor_id,
        invoice_ids,
        users: Vec::new(),
        calendar,
        busiest_vendor_id,
        vendor_payments,
        credits,
        statement_pages: 1,
    };
    let today = fixture.calendar.date_of(Timestamp::now());
    let first = fixture.year_statement(today, "&page=1&pageSize=100");
    let first = expect_ok(call(addr, Method::GET, &first, token, None).await?, "a statement's first page")?;
    let lines = first["totalCount"].as_u64().ok_or("a statement page without totalCount")?;
    fixture.statement_pages = lines.div_ceil(100).max(1);
    for n in 1..=20 {
        let (email, password) = bench_user(n);
        let body = json!({ "firstName": "Bench", "lastName": format!("Login {n:02}"), "email": email,
            "password": password, "roleId": 2 });
        let (status, answer) = call(addr, Method::POST, "/api/users", token, Some(body)).await?;
        if status != StatusCode::CREATED && status != StatusCode::CONFLICT {
            return Err(format!("creating {email}: {status} {answer}"));
        }
        fixture.users.push((email, password));
    }
    Ok(fixture)
}

/// Signs in and returns the token and the user's id.
///
/// # Errors
/// When the sign-in fails.
pub async fn login(addr: SocketAddr, email: &str, password: &str) -> Result<(String, i64), String> {
    let body = json!({ "email": email, "password": password });
    let session = expect_ok(call(addr, Method::POST, "/api/auth/login", None, Some(body)).await?, "login")?;
    let token = session["token"].as_str().ok_or("the login answer has no token")?.to_owned();
    let id = session["user"]["id"].as_i64().ok_or("the login answer has no user id")?;
    Ok((token, id))
}

/// Accepted credits the credit applications of a run use, per vendor of the vendor payments.
pub const CREDITS_PER_VENDOR: usize = 500;

/// Claims and accepts [`CREDITS_PER_VENDOR`] credits of 10 for each of `vendors`, claimed and
/// decided today, sixteen at a time; answers each with its vendor's invoices.
async fn accepted_credits(
    addr: SocketAddr,
    token: &str,
    calendar: &BusinessCalendar,
    vendors: &[(i64, Vec<i64>)],
) -> Result<Vec<(i64, Vec<i64>)>, String> {
    let today = calendar.date_of(Timestamp::now()).to_string();
    let run = Timestamp::now().as_microsecond();
    let wanted: Vec<(i64, usize)> =
        vendors.iter().flat_map(|(vendor, _)| (0..CREDITS_PER_VENDOR).map(move |n| (*vendor, n))).collect();
    let mut credits = Vec::with_capacity(wanted.len());
    for chunk in wanted.chunks(16) {
        let mut tasks = tokio::task::JoinSet::new();
        for (vendor, n) in chunk.iter().copied() {
            let (token, today) = (token.to_owned(), today.clone());
            tasks.spawn(async move {
                let claim = json!({ "vendorId": vendor, "creditNumber": format!("BENCH-{run}-{n}"), "kind": "Other",
                    "claimedAmount": 10, "claimDate": today });
                let credit = expect_ok(
                    call(addr, Method::POST, "/api/vendor-credits", Some(&token), Some(claim)).await?,
                    "a credit",
                )?;
                let id = credit["id"].as_i64().ok_or("a credit without an id")?;
                let decision = json!({ "acceptedAmount": 10, "decisionDate": today });
                let path = format!("/api/vendor-credits/{id}/decision");
                expect_ok(call(addr, Method::POST, &path, Some(&token), Some(decision)).await?, "a decision")?;
                Ok::<(i64, i64), String>((vendor, id))
            });
        }
        while let Some(done) = tasks.join_next().await {
            let (vendor, id) = done.map_err(|error| error.to_string())??;
            let invoices = vendors.iter().find(|(of, _)| *of == vendor).map(|(_, invoices)| invoices.clone());
            credits.push((id, invoices.unwrap_or_default()));
        }
    }
    Ok(credits)
}

fn expect_ok((status, body): (StatusCode, Value), what: &str) -> Result<Value, String> {
    if status.is_success() { Ok(body) } else { Err(format!("{what}: {status} {body}")) }
}

/// Runs the pharmapay server over the memory store in this process until it is killed: the
/// engine, route table and HTTP server of `pharmapay-server`, the demo pharmacy onboarded and
/// the demo data of `scale` written before the address is announced.
pub fn run_memory_server(scale: Scale, log: &str) -> std::io::Result<()> {
    children::exit_with_parent();
    let filter =
        tracing_subscriber::EnvFilter::try_new(log).unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn"));
    tracing_subscriber::fmt().with_env_filter(filter).with_target(false).with_ansi(false).init();
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
    runtime.block_on(async {
        let engine = PharmaPay::open(MemoryStore::new(), SystemClock, EngineOptions::default())
            .await
            .map_err(std::io::Error::other)?;
        let setup = pharmapay_server::demo_onboarding();
        engine.complete_onboarding(setup).await.map_err(std::io::Error::other)?;
        let started = Instant::now();
        demo::seed(engine.store(), scale.size(), engine.now()).await.map_err(std::io::Error::other)?;
        eprintln!("memory store seeded at {} in {:.1} s", scale.name(), started.elapsed().as_secs_f64());
        // The same request timeout as the binary's default configuration.
        let timeout = Duration::from_secs(pharmapay_server::config::Config::defaults().request_timeout_secs);
        let app =
            pharmapay_server::app::App::new(engine, pharmapay_server::http::Cors::new(Vec::new()), "memory", timeout);
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
        children::announce("pharmapay", listener.local_addr()?);
        pharmapay_server::server::serve(listener, app, std::future::pending()).await
    })
}

/// The data directory's default: `target/bench-data` of the workspace.
pub fn default_data_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/bench-data")
}

/// The release server binary's default place in the workspace.
pub fn default_server_bin() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/release/pharmapay")
}
