//! Importing a file (D45), measured on a copy of the prepared database: a 100,000-row invoice
//! CSV sent to `POST /api/imports/invoices`, first as a dry run, then for real, each timed from
//! the first byte sent to the answer, with the server's peak resident memory above what it held
//! before (its `VmHWM` reset through `/proc/<pid>/clear_refs` first). The copy keeps the
//! imported invoices out of the database the other rows are measured on, run after run.

use std::fmt::Write as _;
use std::net::SocketAddr;
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::Full;
use hyper::header::{AUTHORIZATION, CONTENT_TYPE, HOST};
use hyper::{Method, Request};
use pharmapay_server::{DEMO_ADMIN_EMAIL, DEMO_ADMIN_PASSWORD};
use serde_json::{Value, json};

use crate::client;
use crate::setup::{self, Backend, Logging, Places, Scale};

/// Rows of the file: D45's most.
pub const ROWS: usize = 100_000;
/// Vendors the file's invoices are spread over, created for the run.
const VENDORS: usize = 50;
/// The targets (D45 issue): seconds for the whole file, by backend, and megabytes of growth.
pub fn target_secs(backend: Backend) -> f64 {
    if backend == Backend::Postgres { 20.0 } else { 10.0 }
}
/// The most the server's peak resident memory may grow by, in MB.
pub const TARGET_MB: f64 = 200.0;

/// What one import run measured.
pub struct Measured {
    pub backend: Backend,
    pub scale: Scale,
    /// Bytes of the file.
    pub bytes: usize,
    /// The dry run: its time and peak growth (MB).
    pub dry: (Duration, f64),
    /// The import: its time and peak growth (MB).
    pub real: (Duration, f64),
}

/// Copies the database at `url`, starts a server on the copy, imports the file twice (a dry
/// run, then for real), and drops the copy.
///
/// # Errors
/// When the copy, the server or an import fails.
pub async fn measure(places: &Places, backend: Backend, scale: Scale, url: &str) -> Result<Measured, String> {
    let copy = Copy::make(places, backend, url, "import").await?;
    let outcome = measure_on(places, backend, scale, &copy.url).await;
    copy.drop_it(places).await;
    outcome
}

async fn measure_on(places: &Places, backend: Backend, scale: Scale, url: &str) -> Result<Measured, String> {
    let (mut server, addr) = setup::start_server(places, backend, scale, url, Logging::Quiet)?;
    let (token, _) = setup::login(addr, DEMO_ADMIN_EMAIL, DEMO_ADMIN_PASSWORD).await?;
    let stamp = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default().as_secs();
    let mut names = Vec::with_capacity(VENDORS);
    for n in 0..VENDORS {
        let name = format!("Import Bench {stamp} {n:02}");
        let body = json!({ "name": name, "vendorType": "Wholesaler" });
        let (status, answer) =
            send(addr, &token, "/api/vendors", "application/json", Bytes::from(body.to_string())).await?;
        if status != 201 {
            return Err(format!("creating a vendor answered {status}: {answer}"));
        }
        names.push(name);
    }
    let file = Bytes::from(invoice_file(stamp, &names));
    let pid = server.pid();
    let dry = timed(addr, &token, "/api/imports/invoices?dryRun=true", &file, pid).await?;
    let real = timed(addr, &token, "/api/imports/invoices", &file, pid).await?;
    server.stop();
    Ok(Measured { backend, scale, bytes: file.len(), dry, real })
}

/// Sends the file once and answers its time and the server's peak growth (MB).
async fn timed(addr: SocketAddr, token: &str, path: &str, file: &Bytes, pid: u32) -> Result<(Duration, f64), String> {
    // Writing 5 to clear_refs resets the peak (VmHWM) to what is resident now.
    std::fs::write(format!("/proc/{pid}/clear_refs"), "5").map_err(|error| format!("clear_refs: {error}"))?;
    let before = status_kib(pid, "VmRSS:")?;
    let started = Instant::now();
    let (status, answer) = send(addr, token, path, "text/csv", file.clone()).await?;
    let took = started.elapsed();
    let peak = status_kib(pid, "VmHWM:")?;
    if status != 200 || answer["created"] != json!(ROWS) {
        return Err(format!("{path} answered {status}: {answer}"));
    }
    eprintln!("{path}: {:.2} s, peak +{:.0} MB", took.as_secs_f64(), peak.saturating_sub(before) as f64 / 1024.0);
    Ok((took, peak.saturating_sub(before) as f64 / 1024.0))
}

/// A `/proc/<pid>/status` figure in KiB.
fn status_kib(pid: u32, field: &str) -> Result<u64, String> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).map_err(|error| error.to_string())?;
    status
        .lines()
        .find_map(|line| line.strip_prefix(field))
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|kib| kib.parse().ok())
        .ok_or_else(|| format!("no {field} in /proc/{pid}/status"))
}

/// The file: `ROWS` invoices over the run's vendors, numbered with the run's stamp, amounts
/// written as Indian text on every other row, dates day first.
fn invoice_file(stamp: u64, vendors: &[String]) -> String {
    let mut file = String::with_capacity(ROWS * 72);
    file.push_str("Invoice Number,Vendor,Amount,Invoice Date,Due Date,Description\n");
    for n in 0..ROWS {
        let vendor = &vendors[n % vendors.len()];
        let rupees = 1_000 + (n * 7_919) % 250_000;
        let amount = if n % 2 == 0 {
            format!("{rupees}.50")
        } else {
            format!("\"Rs. {},{:03}.50\"", rupees / 1000, rupees % 1000)
        };
        let day = 1 + n % 28;
        let _ = writeln!(file, "IMP-{stamp}-{n},{vendor},{amount},{day:02}/10/2026,{day:02}/11/2026,Imported bill {n}");
    }
    file
}

/// Sends `body` as `content_type` with the token on a fresh connection, and answers the status
/// and the JSON body (null when it is none).
///
/// # Errors
/// When the server cannot be reached or the exchange fails.
pub(crate) async fn send(
    addr: SocketAddr,
    token: &str,
    path: &str,
    content_type: &str,
    body: Bytes,
) -> Result<(u16, Value), String> {
    let request = Request::builder()
        .method(Method::POST)
        .uri(path)
        .header(HOST, addr.to_string())
        .header(AUTHORIZATION, format!("Bearer {token}"))
        .header(CONTENT_TYPE, content_type)
        .body(Full::new(body))
        .map_err(|error| error.to_string())?;
    let (status, text) = client::call_request(addr, request).await?;
    Ok((status.as_u16(), serde_json::from_str(&text).unwrap_or(Value::Null)))
}

/// A copy of a prepared database, made for one run and dropped after it.
pub(crate) struct Copy {
    /// The URL of the copy.
    pub(crate) url: String,
    /// The SQLite files to remove, or the PostgreSQL database to drop.
    files: Vec<std::path::PathBuf>,
    database: Option<String>,
}

impl Copy {
    /// Copies the database at `url` beside it, named after `purpose` (`import`, `bank`).
    ///
    /// # Errors
    /// When the copy fails, or for the memory store, which has nothing to copy.
    pub(crate) async fn make(places: &Places, backend: Backend, url: &str, purpose: &str) -> Result<Self, String> {
        match backend {
            Backend::Sqlite => {
                let path = std::path::PathBuf::from(url.trim_start_matches("sqlite:"));
                let copy = path.with_extension(format!("{purpose}.db"));
                // The write-ahead log and its index go with the main file, so the copy holds
                // every committed page, checkpointed or not.
                let mut files = Vec::new();
                for suffix in ["", "-wal", "-shm"] {
                    let from = std::path::PathBuf::from(format!("{}{suffix}", path.display()));
                    let to = std::path::PathBuf::from(format!("{}{suffix}", copy.display()));
                    let _ = std::fs::remove_file(&to);
                    if from.exists() {
                        std::fs::copy(&from, &to).map_err(|error| format!("copying {}: {error}", from.display()))?;
                    }
                    files.push(to);
                }
                Ok(Self { url: format!("sqlite:{}", copy.display()), files, database: None })
            }
            Backend::Postgres => {
                let source = url.rsplit('/').next().unwrap_or_default().to_owned();
                let name = format!("{source}_{purpose}");
                let started = Instant::now();
                for sql in
                    [format!("DROP DATABASE IF EXISTS {name}"), format!("CREATE DATABASE {name} TEMPLATE {source}")]
                {
                    admin_sql(places, &sql).await?;
                }
                eprintln!("copied {source} to {name} in {:.1} s", started.elapsed().as_secs_f64());
                Ok(Self { url: format!("{}/{name}", places.pg_base), files: Vec::new(), database: Some(name) })
            }
            Backend::Memory => Err(format!("the {purpose} is measured on SQL backends")),
        }
    }

    /// Removes the copy's files, or drops its database.
    pub(crate) async fn drop_it(self, places: &Places) {
        for file in &self.files {
            let _ = std::fs::remove_file(file);
        }
        if let Some(name) = &self.database
            && let Err(error) = admin_sql(places, &format!("DROP DATABASE IF EXISTS {name}")).await
        {
            eprintln!("could not drop {name}: {error}");
        }
    }
}

async fn admin_sql(places: &Places, sql: &str) -> Result<(), String> {
    let admin = format!("{}/{}", places.pg_base, places.pg_admin_db);
    let mut conn = <sqlx::PgConnection as sqlx::Connection>::connect(&admin)
        .await
        .map_err(|error| format!("PostgreSQL at {admin}: {error}"))?;
    sqlx::raw_sql(sqlx::AssertSqlSafe(sql.to_owned())).execute(&mut conn).await.map_err(|error| error.to_string())?;
    Ok(())
}

/// The imports' table, in Markdown.
pub fn render(measured: &[Measured]) -> String {
    let mut text = String::from(
        "\n#### Importing a 100,000-row invoice CSV (D45)\n\n\
         | Backend | Scale | File | Dry run | Peak growth | Import | Peak growth | Target | Met |\n\
         |---|---|---|---|---|---|---|---|---|\n",
    );
    for m in measured {
        let target = target_secs(m.backend);
        let met =
            m.real.0.as_secs_f64() <= target && m.dry.0 <= m.real.0 && m.real.1 <= TARGET_MB && m.dry.1 <= TARGET_MB;
        let _ = writeln!(
            text,
            "| {} | {} | {:.1} MB | {:.2} s | {:.0} MB | {:.2} s | {:.0} MB | ≤ {target:.0} s, ≤ {TARGET_MB:.0} MB, dry run no slower | {} |",
            m.backend.name(),
            m.scale.name(),
            m.bytes as f64 / 1e6,
            m.dry.0.as_secs_f64(),
            m.dry.1,
            m.real.0.as_secs_f64(),
            m.real.1,
            if met { "yes" } else { "no" }
        );
    }
    text
}
