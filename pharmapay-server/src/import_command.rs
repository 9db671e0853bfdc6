//! `pharmapay import {vendors,invoices} FILE [--dry-run] [--as EMAIL]`: a first migration
//! without a running server (D45). It opens the configured database as the server does and
//! makes the same engine call as `POST /api/imports/...`, so the checks, the single
//! transaction and the audit entries are the same; progress goes to standard error.

use std::io::{IsTerminal, Write};
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use pharmapay_core::imports::{FileFormat, ImportFile, ImportSummary, MAX_FILE_BYTES};
use pharmapay_core::imports::{ImportRequest, ImportStage};
use pharmapay_core::{Clock, Error, PharmaPay, Store};
use pharmapay_store_sqlx::SqlxStore;

use crate::config::{Config, Database, ImportArgs, ImportKind};
use crate::{StartError, engine_options, with_causes};

/// Runs the command and says how it went; the exit code is 0 on success, 1 when the file was
/// refused, 2 when the database could not be used.
pub async fn main(config: &Config, args: &ImportArgs, clock: impl Clock) -> ExitCode {
    let file = match read_file(args) {
        Ok(file) => file,
        Err(message) => {
            eprintln!("pharmapay: {message}");
            return ExitCode::from(1);
        }
    };
    let started = Instant::now();
    let estimate = match file.format {
        FileFormat::Csv => Some(file.bytes.iter().filter(|byte| **byte == b'\n').count().saturating_sub(1)),
        FileFormat::Xlsx => None,
    };
    let outcome = match config.database() {
        Database::Memory => Err(Failure::Start(StartError::Config(
            "importing into the in-memory store keeps nothing; set PHARMAPAY_DATABASE_URL to a SQLite file or \
             PostgreSQL"
                .into(),
        ))),
        Database::Sql(url) => match SqlxStore::connect_with(&url, config.store_options()).await {
            Err(error) => Err(Failure::Start(error.into())),
            Ok(SqlxStore::Sqlite(store)) => import(store, config, args, file, estimate, clock).await,
            Ok(SqlxStore::Postgres(store)) => import(store, config, args, file, estimate, clock).await,
        },
    };
    match outcome {
        Ok(summary) => {
            let verb = if summary.dry_run { "would create" } else { "created" };
            println!(
                "{} rows read: {verb} {}, {} unchanged{}, in {:.1} s.",
                summary.row_count,
                summary.created,
                summary.unchanged,
                if summary.dry_run { " (dry run: nothing was written)" } else { "" },
                started.elapsed().as_secs_f64()
            );
            ExitCode::SUCCESS
        }
        Err(Failure::Import(Error::Rows(errors))) => {
            for (key, messages) in errors.errors().iter() {
                for message in messages {
                    eprintln!("{key}: {message}");
                }
            }
            eprintln!("pharmapay: {errors}; nothing was imported");
            ExitCode::from(1)
        }
        Err(Failure::Import(error @ (Error::Validation(_) | Error::TooLarge(_) | Error::Conflict(_)))) => {
            eprintln!("pharmapay: the file was refused: {error}");
            ExitCode::from(1)
        }
        Err(Failure::Import(error)) => {
            eprintln!("pharmapay: the import failed: {}", with_causes(&error));
            ExitCode::from(2)
        }
        Err(Failure::Start(error)) => {
            eprintln!("pharmapay: {}", with_causes(&error));
            ExitCode::from(2)
        }
    }
}

enum Failure {
    Start(StartError),
    Import(Error),
}

fn read_file(args: &ImportArgs) -> Result<ImportFile, String> {
    let path = &args.file;
    let extension = path.extension().and_then(|extension| extension.to_str()).unwrap_or("").to_ascii_lowercase();
    let format = match extension.as_str() {
        "csv" => FileFormat::Csv,
        "xlsx" => FileFormat::Xlsx,
        _ => return Err(format!("{} is neither a .csv nor an .xlsx file", path.display())),
    };
    let size = std::fs::metadata(path).map_err(|error| format!("cannot read {}: {error}", path.display()))?.len();
    if size > MAX_FILE_BYTES as u64 {
        return Err(format!("{} is larger than {} MiB", path.display(), MAX_FILE_BYTES >> 20));
    }
    let bytes = std::fs::read(path).map_err(|error| format!("cannot read {}: {error}", path.display()))?;
    Ok(ImportFile { format, bytes })
}

async fn import<S: Store>(
    store: S,
    config: &Config,
    args: &ImportArgs,
    file: ImportFile,
    estimate: Option<usize>,
    clock: impl Clock,
) -> Result<ImportSummary, Failure> {
    let engine =
        PharmaPay::open(store, clock, engine_options(config)).await.map_err(|error| Failure::Start(error.into()))?;
    let operator = engine.operator(args.admin_email.as_deref()).await.map_err(|error| match error {
        Error::NotFound { .. } => Failure::Start(StartError::Config(match &args.admin_email {
            Some(email) => format!("no active admin has the email {email}"),
            None => "the database has no active admin: onboard the pharmacy first".into(),
        })),
        other => Failure::Import(other),
    })?;
    let request = ImportRequest { file, dry_run: args.dry_run, idempotency: None, progress: Some(progress(estimate)) };
    let imported = match args.kind {
        ImportKind::Invoices => engine.import_invoices(&operator, request).await,
        ImportKind::Vendors => engine.import_vendors(&operator, request).await,
    };
    if std::io::stderr().is_terminal() {
        eprintln!();
    }
    match imported {
        Ok(created) => Ok(match created {
            pharmapay_core::idempotency::Created::New(summary) => summary,
            // Without a key nothing is replayed.
            pharmapay_core::idempotency::Created::Replayed(_) => ImportSummary::default(),
        }),
        Err(error) => Err(Failure::Import(error)),
    }
}

/// Draws the progress on standard error: a bar over the rows a CSV's lines promise when
/// standard error is a terminal, a line per stage otherwise.
fn progress(estimate: Option<usize>) -> pharmapay_core::imports::ImportProgress {
    let terminal = std::io::stderr().is_terminal();
    let last_width = Arc::new(AtomicUsize::new(0));
    Arc::new(move |stage| {
        let line = match stage {
            ImportStage::Reading(rows) => match estimate.filter(|total| *total > 0) {
                Some(total) => {
                    let done = rows.min(total);
                    let filled = done * 30 / total;
                    format!("reading [{}{}] {rows} of about {total} rows", "#".repeat(filled), "-".repeat(30 - filled))
                }
                None => format!("reading: {rows} rows"),
            },
            ImportStage::Read(rows) => format!("read {rows} rows"),
            ImportStage::Writing(rows) => format!("checking and writing {rows} rows in one transaction..."),
        };
        let mut stderr = std::io::stderr().lock();
        if terminal {
            let width = last_width.swap(line.len(), Ordering::Relaxed);
            let _ = write!(stderr, "\r{line}{}", " ".repeat(width.saturating_sub(line.len())));
        } else if !matches!(stage, ImportStage::Reading(_)) {
            let _ = writeln!(stderr, "{line}");
        }
        let _ = stderr.flush();
    })
}
