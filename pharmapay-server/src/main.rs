//! The `pharmapay` binary: parses the configuration, starts the server, and stops it
//! gracefully on SIGINT or SIGTERM.

use std::process::ExitCode;

use clap::Parser;
use pharmapay_core::SystemClock;
use pharmapay_server::config::{Cli, Command, Config, OpenapiArgs, SeedDemoArgs};
use pharmapay_server::demo::DemoSize;
use pharmapay_server::with_causes;
use tracing::{error, info};
use tracing_subscriber::EnvFilter;

fn main() -> ExitCode {
    let cli = Cli::parse();
    if let Some(Command::Openapi(args)) = &cli.command {
        return write_openapi(args);
    }
    // A demo load builds indexes over millions of rows on purpose: sqlx's warnings about slow
    // statements would only alarm, unless the filter asks for sqlx's logs itself.
    let filter = match &cli.command {
        Some(Command::SeedDemo(_)) if !cli.config.log_filter.contains("sqlx") => {
            format!("{},sqlx::query=error", cli.config.log_filter)
        }
        _ => cli.config.log_filter.clone(),
    };
    init_logging(&filter);
    let runtime = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("pharmapay: could not start the async runtime: {error}");
            return ExitCode::FAILURE;
        }
    };
    runtime.block_on(async {
        match cli.command.unwrap_or(Command::Serve) {
            Command::Serve => serve(cli.config).await,
            Command::SeedDemo(args) => seed_demo(cli.config, args).await,
            Command::Import(args) => pharmapay_server::import_command::main(&cli.config, &args, SystemClock).await,
            Command::Openapi(args) => write_openapi(&args),
        }
    })
}

fn init_logging(filter: &str) {
    let filter = EnvFilter::try_new(filter).unwrap_or_else(|error| {
        eprintln!("pharmapay: ignoring the log filter {filter:?} ({error}); using `info`");
        EnvFilter::new("info")
    });
    let ansi = std::io::IsTerminal::is_terminal(&std::io::stdout());
    tracing_subscriber::fmt().with_env_filter(filter).with_target(false).with_ansi(ansi).init();
}

async fn serve(config: Config) -> ExitCode {
    let running = match pharmapay_server::start(&config, SystemClock).await {
        Ok(running) => running,
        Err(start_error) => {
            let start_error = with_causes(&start_error);
            error!("{start_error}");
            eprintln!("pharmapay: {start_error}");
            return ExitCode::from(2);
        }
    };
    shutdown_signal().await;
    info!("shutdown requested");
    match running.stop().await {
        Ok(()) => {
            info!("stopped");
            ExitCode::SUCCESS
        }
        Err(stop_error) => {
            error!(error = %with_causes(&stop_error), "the server stopped with an error");
            ExitCode::FAILURE
        }
    }
}

async fn seed_demo(config: Config, args: SeedDemoArgs) -> ExitCode {
    let size = DemoSize {
        vendors: args.vendors,
        invoices: args.invoices,
        payments: args.payments,
        branches: args.branches,
        seed: args.seed,
    };
    let started = std::time::Instant::now();
    match pharmapay_server::seed_demo(&config, size, SystemClock).await {
        Ok(report) => {
            println!(
                "Wrote {} vendors, {} invoices, {} payments and {} vendor credits in {:.1} s.",
                report.vendors,
                report.invoices,
                report.payments,
                report.credits,
                started.elapsed().as_secs_f64()
            );
            println!(
                "Sign in as {} with password {} (when this run onboarded the demo pharmacy).",
                pharmapay_server::DEMO_ADMIN_EMAIL,
                pharmapay_server::DEMO_ADMIN_PASSWORD
            );
            ExitCode::SUCCESS
        }
        Err(seed_error) => {
            let seed_error = with_causes(&seed_error);
            error!("{seed_error}");
            eprintln!("pharmapay: {seed_error}");
            ExitCode::from(2)
        }
    }
}

/// Writes the API document to the file `args` names, or to standard output.
fn write_openapi(args: &OpenapiArgs) -> ExitCode {
    let document = pharmapay_server::routes::api_document();
    let written = match &args.path {
        Some(path) => std::fs::write(path, document),
        None => std::io::Write::write_all(&mut std::io::stdout().lock(), document),
    };
    match written {
        Ok(()) => ExitCode::SUCCESS,
        Err(write_error) => {
            eprintln!("pharmapay: could not write the OpenAPI document: {write_error}");
            ExitCode::FAILURE
        }
    }
}

async fn shutdown_signal() {
    let interrupt = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut signal) => {
                signal.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! {
        () = interrupt => {}
        () = terminate => {}
    }
}
