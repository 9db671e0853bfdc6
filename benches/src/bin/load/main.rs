//! The load harness: starts the real `pharmapay` server on a prepared database, drives each
//! endpoint the benchmark issue names with concurrent keep-alive clients on 127.0.0.1, and
//! prints one table per backend and scale with requests/s, p50 and p99 next to the ceilings
//! measured in the same run: a minimal hyper JSON server, and the bare SQL statements the
//! store runs, timed directly through sqlx. Below each table come the sign-in throttling
//! scenarios of D21 and D40 (`logins`): a burst of right-password sign-ins for one account, a
//! flood of attempts for a throttled email, and payments beside such a flood.
//!
//! Run it from the workspace root after building the server in release mode:
//!
//! ```text
//! cargo build --release -p pharmapay-server
//! cargo run --release -p pharmapay-benches --bin load -- --backend sqlite --scale S
//! cargo run --release -p pharmapay-benches --bin load -- --backend all --scale all
//! cargo run --release -p pharmapay-benches --bin load -- --backend sqlite --only throttling
//! ```
//!
//! Every process it starts is stopped when it ends, also on a panic; it only ever connects to
//! 127.0.0.1. `BENCHMARKS.md` describes the method and the figures.

mod attacks;
mod bank;
mod children;
mod client;
mod events;
mod imports;
mod logins;
mod machine;
mod setup;
mod sql;
mod table;
mod traffic;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use clap::{Args, Parser, Subcommand};
use hyper::{Method, StatusCode};
use pharmapay_core::jiff::Timestamp;

use crate::children::Child;
use crate::client::{Timing, Traffic, request};
use crate::setup::{Backend, Logging, Places, Scale};
use crate::sql::{Ceiling, Context, Database, ListPage, SqlTiming, Statement, Write};
use crate::table::{Block, Endpoint, Row, SqlFigure};
use crate::traffic::{logins, traffic_for};

#[derive(Parser)]
#[command(
    name = "load",
    about = "Load harness of the pharmapay server: throughput and latency next to their ceilings."
)]
struct Cli {
    #[command(subcommand)]
    command: Option<Hidden>,
    #[command(flatten)]
    run: RunArgs,
}

#[derive(Subcommand)]
enum Hidden {
    /// Serves the fixed JSON body of the hyper ceiling until killed.
    #[command(hide = true)]
    CeilingServer,
    /// Serves the pharmapay API over the memory store, seeded at `scale`, until killed.
    #[command(hide = true)]
    MemoryServer {
        /// The demo scale.
        #[arg(long, value_enum)]
        scale: Scale,
        /// The log filter.
        #[arg(long, default_value = "warn")]
        log: String,
    },
}

/// Which backends.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
enum BackendChoice {
    All,
    Memory,
    Sqlite,
    Postgres,
}

/// Which scales.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
enum ScaleChoice {
    #[value(name = "all")]
    All,
    #[value(name = "S", alias = "s")]
    Small,
    #[value(name = "L", alias = "l")]
    Large,
}

#[derive(Args)]
struct RunArgs {
    /// Backends to measure (comma-separated): memory, sqlite, postgres or all.
    #[arg(long, value_enum, value_delimiter = ',', default_value = "all")]
    backend: Vec<BackendChoice>,
    /// Scales to measure: S, L or all.
    #[arg(long, value_enum, default_value = "S")]
    scale: ScaleChoice,
    /// Keep-alive connections of the loaded runs.
    #[arg(long, default_value_t = 64)]
    connections: usize,
    /// Connections for endpoints whose single-connection median is above `--heavy-ms`: with
    /// 64 connections a slow endpoint would only measure its queue.
    #[arg(long, default_value_t = 8)]
    heavy_connections: usize,
    /// The single-connection median (ms) above which an endpoint counts as heavy.
    #[arg(long, default_value_t = 20.0)]
    heavy_ms: f64,
    /// Warm-up seconds before each loaded window.
    #[arg(long, default_value_t = 2.0)]
    warmup: f64,
    /// Seconds of each loaded measuring window.
    #[arg(long, default_value_t = 5.0)]
    window: f64,
    /// Seconds of each single-connection latency window (after a one-second warm-up).
    #[arg(long, default_value_t = 3.0)]
    single_window: f64,
    /// Worker threads of the load generator.
    #[arg(long, default_value_t = 2)]
    client_threads: usize,
    /// Measure only the rows whose key contains one of these (comma-separated). Endpoint keys:
    /// get-vendor, vendors-default, vendors-by-balance, vendors-search, invoices-default,
    /// invoices-overdue, invoices-partly-paid, invoices-search, transactions-default,
    /// dashboard-summary, dashboard-top-vendors, dashboard-recent-invoices, dashboard-monthly,
    /// dashboard-payables, dashboard-license-alerts, aging-today, aging-year-back,
    /// statement-year, aging-today-page, statement-year-first-page, statement-year-last-page,
    /// create-payment, vendor-payment, apply-credit, login, get-vendor-during-logins,
    /// get-vendor-during-aging. `import`: a 100,000-row invoice CSV imported into a copy of the
    /// database, as a dry run and for real (D45). `bank`: a 5,000-line bank statement uploaded into
    /// a copy of the database, and one line's action against a vendor fetch (D46). Sign-in
    /// throttling scenarios (D21, D40), all three with
    /// `throttling`: throttling-burst (32 parallel right-password sign-ins for one account, 5
    /// rounds), throttling-flood (1,000 attempts for a throttled email, with the audit entries
    /// and bytes on disk they wrote), throttling-payments (POST /api/transactions alone, then
    /// beside 20 connections of throttled attempts). Attacks on shared resources (D48), all
    /// three with `attack`: attack-aging (8 clients opening the aging and going away after 100
    /// ms), attack-downloads (8 clients reading report downloads 64 KiB every 30 s), and for
    /// comparison attack-one-download (one client downloading the same report at full speed);
    /// each measures other users' profile fetches and sign-ins alone and beside it.
    #[arg(long, value_delimiter = ',')]
    only: Vec<String>,
    /// Also measure the memory store at L, whose in-process load takes very long.
    #[arg(long)]
    memory_large: bool,
    /// Skip the bare SQL ceilings.
    #[arg(long)]
    skip_sql: bool,
    /// The release `pharmapay` binary.
    #[arg(long, default_value_os_t = setup::default_server_bin())]
    server_bin: PathBuf,
    /// Where the SQLite databases are kept between runs.
    #[arg(long, default_value_os_t = setup::default_data_dir())]
    data_dir: PathBuf,
    /// The PostgreSQL server, without a database name (only 127.0.0.1 or localhost).
    #[arg(long, default_value = "postgres://postgres@127.0.0.1:5432")]
    pg_url: String,
    /// An existing PostgreSQL database to create the benchmark databases from.
    #[arg(long, default_value = "test")]
    pg_admin_db: String,
    /// Also append the tables, as Markdown, to this file.
    #[arg(long)]
    markdown: Option<PathBuf>,
    /// Largest share of the two cores other processes may keep busy before a block starts
    /// (the harness waits up to a minute for the machine to calm down, then goes on and says so).
    #[arg(long, default_value_t = 0.15)]
    max_busy: f64,
}

fn main() -> std::process::ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Some(Hidden::CeilingServer) => exit(children::run_ceiling_server()),
        Some(Hidden::MemoryServer { scale, log }) => exit(setup::run_memory_server(scale, &log)),
        None => {
            let runtime = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(cli.run.client_threads.max(1))
                .enable_all()
                .build()
                .expect("a Tokio runtime starts");
            // On SIGINT or SIGTERM the measurement is dropped, and with it the guards of the
            // processes it started, which stop them.
            let outcome = runtime.block_on(async {
                tokio::select! {
                    outcome = run(cli.run) => outcome,
                    signal = stop_signal() => Err(format!("stopped by {signal}")),
                }
            });
            match outcome {
                Ok(()) => std::process::ExitCode::SUCCESS,
                Err(error) => {
                    eprintln!("load: {error}");
                    std::process::ExitCode::FAILURE
                }
            }
        }
    }
}

/// Waits for SIGINT or SIGTERM and names it.
async fn stop_signal() -> &'static str {
    use tokio::signal::unix::{SignalKind, signal};
    let (Ok(mut interrupt), Ok(mut terminate)) = (signal(SignalKind::interrupt()), signal(SignalKind::terminate()))
    else {
        return std::future::pending().await;
    };
    tokio::select! {
        _ = interrupt.recv() => "SIGINT",
        _ = terminate.recv() => "SIGTERM",
    }
}

fn exit(result: std::io::Result<()>) -> std::process::ExitCode {
    match result {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("load: {error}");
            std::process::ExitCode::FAILURE
        }
    }
}

/// The settings every block shares.
struct Settings {
    args: RunArgs,
    places: Places,
    loaded: Timing,
    single: Timing,
    sql: SqlTiming,
}

async fn run(args: RunArgs) -> Result<(), String> {
    let host = args.pg_url.split('@').next_back().unwrap_or_default();
    if !(host.starts_with("127.0.0.1") || host.starts_with("localhost")) {
        return Err(format!("--pg-url must point at 127.0.0.1 or localhost, not {host}"));
    }
    if !args.server_bin.exists() {
        return Err(format!(
            "{} is missing: build it first with `cargo build --release -p pharmapay-server`",
            args.server_bin.display()
        ));
    }
    let backends: Vec<Backend> = if args.backend.contains(&BackendChoice::All) {
        vec![Backend::Memory, Backend::Sqlite, Backend::Postgres]
    } else {
        let mut chosen: Vec<Backend> = args
            .backend
            .iter()
            .map(|choice| match choice {
                BackendChoice::Memory => Backend::Memory,
                BackendChoice::Postgres => Backend::Postgres,
                _ => Backend::Sqlite,
            })
            .collect();
        chosen.sort();
        chosen.dedup();
        chosen
    };
    let scales = match args.scale {
        ScaleChoice::All => vec![Scale::Small, Scale::Large],
        ScaleChoice::Small => vec![Scale::Small],
        ScaleChoice::Large => vec![Scale::Large],
    };
    let settings = Settings {
        places: Places {
            server_bin: args.server_bin.clone(),
            data_dir: args.data_dir.clone(),
            pg_base: args.pg_url.trim_end_matches('/').to_owned(),
            pg_admin_db: args.pg_admin_db.clone(),
        },
        loaded: Timing { warmup: Duration::from_secs_f64(args.warmup), window: Duration::from_secs_f64(args.window) },
        single: Timing { warmup: Duration::from_secs(1), window: Duration::from_secs_f64(args.single_window) },
        sql: SqlTiming { latency_budget: Duration::from_secs(2), rate_window: Duration::from_secs(3) },
        args,
    };
    // Databases first, so that no seeding runs while anything is measured.
    let mut seeded = Vec::new();
    for &scale in &scales {
        for &backend in &backends {
            if backend == Backend::Memory && scale == Scale::Large && !settings.args.memory_large {
                // The memory store checks each imported invoice's number against every invoice
                // it holds, so loading a million takes far longer than the whole run.
                eprintln!("skipping the memory store at L (pass --memory-large to wait for its load)");
                continue;
            }
            let prepared = settings.places.prepare(backend, scale).await?;
            seeded.push((backend, scale, prepared));
        }
    }
    let started = Instant::now();
    let (ceiling, ceiling_addr) = {
        let exe = std::env::current_exe().map_err(|error| error.to_string())?;
        let mut command = std::process::Command::new(exe);
        command.arg("ceiling-server");
        Child::spawn_server("ceiling server", command, Duration::from_secs(30))?
    };
    let import_targets: Vec<(Backend, Scale, String)> = seeded
        .iter()
        .filter(|(backend, _, _)| *backend != Backend::Memory)
        .map(|(backend, scale, prepared)| (*backend, *scale, prepared.url.clone()))
        .collect();
    // `--only import`, `--only bank` or `--only events` measures those alone, without the
    // endpoint rows.
    let only_imports = !settings.args.only.is_empty()
        && settings
            .args
            .only
            .iter()
            .all(|only| ["import", "bank", "events"].iter().any(|key| key.contains(only.as_str())));
    let mut blocks = Vec::new();
    for (backend, scale, prepared) in seeded.into_iter().filter(|_| !only_imports) {
        let block =
            measure_block(&settings, backend, scale, &prepared.url, prepared.seeded_in, (ceiling_addr, ceiling.pid()))
                .await?;
        let text = table::render(&block);
        println!("{text}");
        if let Some(path) = &settings.args.markdown {
            append(path, &text)?;
        }
        blocks.push(block);
    }
    drop(ceiling);
    if selected(&settings.args.only, "import") {
        let mut measured = Vec::new();
        for (backend, scale, url) in &import_targets {
            eprintln!("== import {} {} ==", backend.name(), scale.name());
            measured.push(imports::measure(&settings.places, *backend, *scale, url).await?);
        }
        let text = imports::render(&measured);
        println!("{text}");
        if let Some(path) = &settings.args.markdown {
            append(path, &text)?;
        }
    }
    if selected(&settings.args.only, "events") {
        let text = events::measure_all(&settings.places, &import_targets, settings.args.max_busy).await?;
        println!("{text}");
        if let Some(path) = &settings.args.markdown {
            append(path, &text)?;
        }
    }
    if selected(&settings.args.only, "bank") {
        let text = bank::measure_all(&settings.places, &import_targets, settings.args.max_busy).await?;
        println!("{text}");
        if let Some(path) = &settings.args.markdown {
            append(path, &text)?;
        }
    }
    let summary = table::summary(&blocks);
    println!("{summary}");
    if let Some(path) = &settings.args.markdown {
        append(path, &summary)?;
    }
    eprintln!("done in {:.0} s", started.elapsed().as_secs_f64());
    Ok(())
}

fn append(path: &PathBuf, text: &str) -> Result<(), String> {
    use std::io::Write as _;
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .map_err(|error| format!("{}: {error}", path.display()))?;
    writeln!(file, "{text}").map_err(|error| error.to_string())
}

/// The bare SQL statement lists of an endpoint: the ceiling's, and others shown beside it.
fn statements_for(endpoint: Endpoint, backend: Backend, context: &Context) -> Vec<(&'static str, Vec<Statement>)> {
    let session = context.session();
    let with_session = |statement: Statement| vec![session.clone(), statement];
    let page = |page: ListPage| vec![("store", with_session(sql::store_page(backend, page, context.today_start())))];
    match endpoint {
        Endpoint::GetVendor => vec![("store", with_session(Statement::new(sql::GET_VENDOR, vec![context.vendor_id])))],
        Endpoint::AgingYearBack => match context.aging_statement() {
            Some(statement) => vec![("store", with_session(statement))],
            None => Vec::new(),
        },
        Endpoint::InvoicesDefault => page(ListPage::InvoicesDefault),
        Endpoint::InvoicesOverdue => page(ListPage::InvoicesOverdue),
        Endpoint::VendorsByBalance => page(ListPage::VendorsByBalance),
        Endpoint::Summary => vec![("store", with_session(Statement::new(sql::SUMMARY, vec![context.recent_from()])))],
        Endpoint::TopVendors => vec![("store", with_session(Statement::new(sql::TOP_VENDORS, vec![5])))],
        Endpoint::RecentInvoices => vec![("store", with_session(Statement::new(sql::RECENT_INVOICES, vec![5])))],
        Endpoint::Monthly => vec![("store", with_session(Statement::new(sql::MONTHLY, context.month_days())))],
        _ => Vec::new(),
    }
}

/// The statements the server must be seen sending for the bare SQL to be its ceiling.
fn expected_statements(backend: Backend) -> Vec<String> {
    let mut expected: Vec<String> = [
        sql::SESSION,
        sql::GET_VENDOR,
        sql::SUMMARY,
        sql::TOP_VENDORS,
        sql::RECENT_INVOICES,
        sql::MONTHLY,
        sql::ADD_PAID,
        sql::INSERT_PAYMENT,
        sql::INSERT_AUDIT,
    ]
    .iter()
    .map(|text| (*text).to_owned())
    .collect();
    // Only the texts are compared: any day does.
    expected.extend(ListPage::ALL.map(|page| sql::store_page(backend, page, Timestamp::now()).sql.to_owned()));
    expected
}

/// Starts a server that logs its SQL, sends each endpoint once, and returns the bare
/// statements the server was not seen sending (empty when every ceiling measures the store's
/// own statements), and every statement it logged (the aging's ceiling is taken from them).
async fn check_statements(
    settings: &Settings,
    backend: Backend,
    scale: Scale,
    url: &str,
) -> Result<(Vec<String>, Vec<String>), String> {
    let (server, addr) = setup::start_server(&settings.places, backend, scale, url, Logging::Statements)?;
    let fixture = setup::fixture(addr).await?;
    for endpoint in Endpoint::ALL {
        if matches!(endpoint, Endpoint::Login | Endpoint::VendorDuringLogins | Endpoint::VendorDuringAging) {
            continue;
        }
        let traffic = traffic_for(endpoint, addr, &fixture, 1);
        let (status, body) = client::call_request(addr, (traffic.make)(0, 0)).await?;
        if status != traffic.expect {
            return Err(format!("{}: {status} {body}", endpoint.label()));
        }
    }
    let logged = server.stop_and_collect_statements();
    let unmatched = expected_statements(backend).into_iter().filter(|statement| !logged.contains(statement)).collect();
    Ok((unmatched, logged))
}

/// Measures one backend at one scale.
async fn measure_block(
    settings: &Settings,
    backend: Backend,
    scale: Scale,
    url: &str,
    seeded_in: Option<Duration>,
    (ceiling_addr, ceiling_pid): (SocketAddr, u32),
) -> Result<Block, String> {
    let args = &settings.args;
    eprintln!("== {} {} ==", backend.name(), scale.name());
    let (unmatched, logged) = match backend {
        Backend::Memory => (None, Vec::new()),
        _ if args.skip_sql => (None, Vec::new()),
        _ => {
            let (unmatched, logged) = check_statements(settings, backend, scale, url).await?;
            (Some(unmatched), logged)
        }
    };
    let conditions = machine::quiet_machine(args.max_busy).await;
    eprintln!("{conditions}");
    let started = Instant::now();
    let (server, addr) = setup::start_server(&settings.places, backend, scale, url, Logging::Quiet)?;
    eprintln!("server pid {} on {addr} (started in {:.1} s)", server.pid(), started.elapsed().as_secs_f64());
    let fixture = setup::fixture(addr).await?;

    // The hyper ceiling, measured the same way right before the endpoints.
    let hyper_traffic = Traffic {
        connections: args.connections,
        make: Arc::new(move |_, _| request(ceiling_addr, Method::GET, "/", None, None)),
        expect: StatusCode::OK,
        pace: None,
    };
    let hyper_single =
        client::run(ceiling_addr, &[Traffic { connections: 1, ..hyper_traffic.clone() }], settings.single)
            .await
            .remove(0);
    let hyper = client::run_with_cpu(ceiling_addr, hyper_traffic, settings.loaded, ceiling_pid, None).await;
    eprintln!("hyper ceiling: {:.0} req/s, p50 {:.2} ms", hyper.rps, hyper.latencies.p50_ms());

    let mut rows: Vec<Row> = Vec::new();
    for endpoint in Endpoint::ALL {
        if !selected(&args.only, endpoint.key()) {
            continue;
        }
        client::settle(addr, "/api/health", Duration::from_secs(180)).await;
        let row = match endpoint {
            Endpoint::VendorDuringLogins | Endpoint::VendorDuringAging => {
                // Vendor fetches, with other traffic on connections of its own beside them.
                let (beside, what) = match endpoint {
                    Endpoint::VendorDuringLogins => (logins(addr, &fixture, 20), "logins"),
                    _ => (
                        traffic_for(Endpoint::AgingYearBack, addr, &fixture, args.heavy_connections),
                        "year-back agings",
                    ),
                };
                let beside_connections = beside.connections;
                let gets = traffic_for(Endpoint::GetVendor, addr, &fixture, args.connections);
                let mut measured = client::run(addr, &[gets, beside], settings.loaded).await;
                let during = measured.remove(0);
                let alongside = measured.remove(0);
                let mut note = format!(
                    "{} {what} on {beside_connections} connections alongside: {}/s, p50 {:.0} ms",
                    alongside.ok,
                    pharmapay_benches::stats::rate(alongside.rps),
                    alongside.latencies.p50_ms()
                );
                if alongside.errors > 0 {
                    note.push_str(&format!(
                        ", {} failed ({})",
                        alongside.errors,
                        alongside.first_error.as_deref().unwrap_or("?")
                    ));
                }
                Row {
                    endpoint,
                    connections: args.connections,
                    loaded: during,
                    single: None,
                    sql: None,
                    note: Some(note),
                }
            }
            _ => {
                let mut single =
                    client::run(addr, &[traffic_for(endpoint, addr, &fixture, 1)], settings.single).await.remove(0);
                if single.latencies.count < 10 && single.errors == 0 {
                    // A slow endpoint: measure again, long enough for about ten requests (or as
                    // long as allowed when not one request finished in the first window).
                    let window = match single.latencies.count {
                        0 => Duration::from_secs(30),
                        _ => (Duration::from_micros(single.latencies.p50_us) * 11).min(Duration::from_secs(30)),
                    };
                    let longer = Timing { warmup: Duration::ZERO, window: window.max(settings.single.window) };
                    client::settle(addr, "/api/health", Duration::from_secs(180)).await;
                    single = client::run(addr, &[traffic_for(endpoint, addr, &fixture, 1)], longer).await.remove(0);
                }
                client::settle(addr, "/api/health", Duration::from_secs(180)).await;
                let heavy = single.latencies.p50_ms() > args.heavy_ms;
                let connections = match endpoint {
                    Endpoint::Login => fixture.users.len(),
                    _ if heavy => args.heavy_connections,
                    _ => args.connections,
                };
                let traffic = traffic_for(endpoint, addr, &fixture, connections);
                let connections = traffic.connections;
                // A request of seconds gets a window of several such requests, so that some
                // finish inside it (at most a minute).
                let timing = if heavy {
                    let p50 = Duration::from_micros(single.latencies.p50_us);
                    Timing {
                        warmup: settings.loaded.warmup.max(p50),
                        window: settings.loaded.window.max(p50 * 3).min(Duration::from_secs(60)),
                    }
                } else {
                    settings.loaded
                };
                let loaded =
                    client::run_with_cpu(addr, traffic, timing, server.pid(), backend.database_process()).await;
                Row { endpoint, connections, loaded, single: Some(single), sql: None, note: None }
            }
        };
        report_errors(&row);
        eprintln!("{}: {:.1} req/s, p50 {:.2} ms", endpoint.label(), row.loaded.rps, row.loaded.latencies.p50_ms());
        rows.push(row);
    }
    let scenarios: Vec<logins::Scenario> =
        logins::Scenario::ALL.into_iter().filter(|scenario| selected(&args.only, scenario.key())).collect();
    let throttling = if scenarios.is_empty() {
        None
    } else {
        let setup = logins::Setup {
            addr,
            token: &fixture.token,
            backend,
            url,
            loaded: settings.loaded,
            payments: traffic_for(Endpoint::CreatePayment, addr, &fixture, args.connections),
            scenarios,
        };
        Some(logins::measure(setup).await?)
    };
    let attacks: Vec<attacks::Attack> =
        attacks::Attack::ALL.into_iter().filter(|attack| selected(&args.only, attack.key())).collect();
    let attacks = if attacks.is_empty() {
        None
    } else {
        Some(attacks::measure(attacks::Setup { addr, fixture: &fixture, timing: settings.loaded, attacks }).await?)
    };
    let invoice_ids = fixture.invoice_ids.clone();
    let admin_id = fixture.admin_id;
    let context = Context {
        admin_id,
        vendor_id: fixture.vendor_id,
        calendar: fixture.calendar.clone(),
        now: Timestamp::now(),
        logged,
    };
    drop(server);

    // Bare SQL, with the server stopped so that it takes nothing from the database.
    let mut argon2 = None;
    let bursts = throttling.as_ref().is_some_and(|throttling| throttling.burst.is_some());
    if bursts || rows.iter().any(|row| matches!(row.endpoint, Endpoint::Login | Endpoint::VendorDuringLogins)) {
        argon2 = Some(tokio::task::spawn_blocking(argon2_ceiling).await.map_err(|error| error.to_string())?);
    }
    if backend != Backend::Memory && !args.skip_sql {
        let db = Database::open(url)?;
        for row in &mut rows {
            let mut figures = Vec::new();
            for (label, statements) in statements_for(row.endpoint, backend, &context) {
                let ceiling = sql::time_reads(&db, &statements, settings.sql).await?;
                figures.push(SqlFigure { label, ceiling });
            }
            if row.endpoint == Endpoint::CreatePayment {
                for (label, write) in
                    [("insert + update", Write::InsertAndUpdate), ("store sequence", Write::StoreSequence)]
                {
                    let ceiling = sql::time_writes(&db, write, &invoice_ids, admin_id, settings.sql).await?;
                    figures.push(SqlFigure { label, ceiling });
                }
            }
            if !figures.is_empty() {
                eprintln!(
                    "bare SQL {}: {}",
                    row.endpoint.label(),
                    figures
                        .iter()
                        .map(|figure| format!(
                            "{} p50 {:.2} ms {:.0}/s",
                            figure.label,
                            figure.ceiling.latencies.p50_ms(),
                            figure.ceiling.rps
                        ))
                        .collect::<Vec<_>>()
                        .join("; ")
                );
                row.sql = Some(figures);
            }
        }
    }
    Ok(Block {
        backend,
        scale,
        conditions,
        seeded_in,
        hyper,
        hyper_single,
        hyper_connections: args.connections,
        argon2,
        rows,
        unmatched,
        throttling,
        attacks,
    })
}

/// Whether `--only` keeps the row or scenario named `key` (all are kept without `--only`).
fn selected(only: &[String], key: &str) -> bool {
    only.is_empty() || only.iter().any(|only| key.contains(only.as_str()))
}

fn report_errors(row: &Row) {
    if row.loaded.errors > 0 || row.single.as_ref().is_some_and(|single| single.errors > 0) {
        eprintln!(
            "  {}: {} errors in the window; first: {}",
            row.endpoint.label(),
            row.loaded.errors + row.single.as_ref().map_or(0, |single| single.errors),
            row.loaded
                .first_error
                .as_deref()
                .or(row.single.as_ref().and_then(|s| s.first_error.as_deref()))
                .unwrap_or("?")
        );
    }
}

/// Argon2id verifications per second on two threads, with the engine's parameters (the
/// crate's defaults): the ceiling of logins, which verify one hash each.
fn argon2_ceiling() -> Ceiling {
    use argon2::{Argon2, PasswordHasher as _, PasswordVerifier as _};
    let argon2 = Argon2::new(argon2::Algorithm::Argon2id, argon2::Version::V0x13, argon2::Params::default());
    let hash = argon2.hash_password(b"bench-password-01").map(|hash| hash.to_string()).unwrap_or_default();
    let mut samples = Vec::new();
    let started = Instant::now();
    while samples.len() < 20 || started.elapsed() < Duration::from_secs(1) {
        let one = Instant::now();
        let _ = argon2.verify_password(b"bench-password-01", hash.as_str());
        samples.push(one.elapsed().as_micros() as u64);
    }
    let window = Duration::from_secs(3);
    let threads: Vec<_> = (0..2)
        .map(|_| {
            let (argon2, hash) = (argon2.clone(), hash.clone());
            std::thread::spawn(move || {
                let started = Instant::now();
                let mut n = 0u64;
                while started.elapsed() < window {
                    let _ = argon2.verify_password(b"bench-password-01", hash.as_str());
                    n += 1;
                }
                n
            })
        })
        .collect();
    let total: u64 = threads.into_iter().map(|thread| thread.join().unwrap_or(0)).sum();
    Ceiling {
        latencies: pharmapay_benches::stats::Latencies::of(samples),
        rps: pharmapay_benches::stats::per_second(total, window),
        cpu_us: None,
        database_cpu_us: None,
    }
}
