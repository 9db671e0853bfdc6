//! The reports benchmark: time and peak memory of the transactions report at 25,000, 50,000
//! and 100,000 rows, next to rust_xlsxwriter writing the same rows alone.
//!
//! - `engine`: the engine's `transactions_report` over a memory store holding exactly that many
//!   active payments, then `Report::save_to` into a sink that only counts bytes. Filling the
//!   store is not timed.
//! - `plain`: rust_xlsxwriter alone, in constant-memory mode, writing the same rows (same
//!   values, columns, formats, widths, frozen header and autofilter) into the same sink; the
//!   row values are computed on the fly.
//!
//! Each measurement runs in a fresh child process, which resets its peak resident memory
//! (`VmHWM`) just before the timed part and reports it after, so the peaks are independent. The
//! memory store itself stays resident during the engine's run, so both the peak and its rise
//! over the resident memory at the start of the timed part are printed.
//!
//! Run with `cargo run --release -p pharmapay-benches --bin xlsx` (about a minute).

use std::io::Write;
use std::time::{Duration, Instant};

use clap::{Parser, Subcommand, ValueEnum};
use pharmapay_benches::stats::{memory_kib, reset_peak_memory};
use pharmapay_core::ids::VendorId;
use pharmapay_core::invoices::NewInvoice;
use pharmapay_core::jiff::civil::{Date, date};
use pharmapay_core::jiff::{Timestamp, ToSpan, tz::TimeZone};
use pharmapay_core::rust_decimal::Decimal;
use pharmapay_core::store::{BulkInvoice, BulkTransaction, BulkVendor};
use pharmapay_core::transactions::{NewTransaction, TransactionFilter, TransactionType};
use pharmapay_core::vendors::{NewVendor, VendorType};
use pharmapay_core::{Amount, BulkLoadStore, EngineOptions, PharmaPay, SystemClock};
use pharmapay_store_memory::MemoryStore;
use rust_xlsxwriter::{ExcelDateTime, Format, Workbook, XlsxError};

#[derive(Parser)]
#[command(name = "xlsx", about = "Time and peak memory of the transactions report against rust_xlsxwriter alone.")]
struct Cli {
    #[command(subcommand)]
    command: Option<Hidden>,
    /// Row counts to measure.
    #[arg(long, value_delimiter = ',', default_value = "25000,50000,100000")]
    rows: Vec<u32>,
    /// Measurements per row count and mode; the median time and the largest peak are shown.
    #[arg(long, default_value_t = 3)]
    repeat: usize,
}

#[derive(Subcommand)]
enum Hidden {
    /// One measurement, in this process; prints one JSON line.
    #[command(hide = true)]
    One {
        /// What writes the sheet.
        #[arg(long, value_enum)]
        mode: Mode,
        /// How many payment rows.
        #[arg(long)]
        rows: u32,
    },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum Mode {
    /// The engine's report over the memory store.
    Engine,
    /// rust_xlsxwriter alone.
    Plain,
}

/// Vendors the payments' invoices belong to.
const VENDORS: u32 = 300;
/// Payments per invoice.
const PAYMENTS_PER_INVOICE: u32 = 3;
/// The `Currency` setting's default symbol, as the engine formats amounts with it.
const MONEY_FORMAT: &str = "\"₹\"#,##0.00;-\"₹\"#,##0.00";

/// The values of payment row `n` (0-based): what the store is filled with and what the plain
/// writer writes.
struct PaymentRow {
    invoice_number: String,
    vendor_name: String,
    cents: i64,
    kind: TransactionType,
    paid_on: Date,
    description: Option<&'static str>,
}

fn invoice_of(n: u32) -> u32 {
    n / PAYMENTS_PER_INVOICE
}

fn vendor_name(vendor: u32) -> String {
    format!("Bench Remedies Distributors {:05}", vendor + 1)
}

fn invoice_number(invoice: u32) -> String {
    format!("B1-{:07}", invoice + 1)
}

fn payment_row(n: u32) -> PaymentRow {
    let invoice = invoice_of(n);
    PaymentRow {
        invoice_number: invoice_number(invoice),
        vendor_name: vendor_name(invoice % VENDORS),
        cents: 100 + i64::from(n.wrapping_mul(7919) % 5_000_000),
        kind: [TransactionType::Upi, TransactionType::NetBanking, TransactionType::Cash][(n % 3) as usize],
        paid_on: date(2024, 1, 1).checked_add(i64::from(n % 700).days()).expect("within the calendar"),
        description: n.is_multiple_of(5).then_some("Monthly stock"),
    }
}

fn noon_utc(day: Date) -> Timestamp {
    day.at(12, 0, 0, 0).to_zoned(TimeZone::UTC).expect("a valid instant").timestamp()
}

fn amount(cents: i64) -> Amount {
    Amount::try_from(Decimal::new(cents, 2)).expect("bench amounts are positive and small")
}

/// A writer that keeps nothing and counts the bytes.
#[derive(Default)]
struct CountingSink(u64);

impl Write for CountingSink {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0 += bytes.len() as u64;
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// One measurement's result.
struct Measurement {
    seconds: f64,
    start_kib: u64,
    peak_kib: u64,
    bytes: u64,
    rows: u64,
}

fn main() -> std::process::ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Some(Hidden::One { mode, rows }) => measure(mode, rows).map(|measured| {
            println!(
                "{}",
                serde_json::json!({ "seconds": measured.seconds, "start_kib": measured.start_kib,
                    "peak_kib": measured.peak_kib, "bytes": measured.bytes, "rows": measured.rows })
            );
        }),
        None => compare(&cli.rows, cli.repeat.max(1)),
    };
    match result {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("xlsx: {error}");
            std::process::ExitCode::FAILURE
        }
    }
}

fn measure(mode: Mode, rows: u32) -> Result<Measurement, String> {
    match mode {
        Mode::Plain => {
            let start_kib = start_timed_part();
            let started = Instant::now();
            let bytes = write_plain(rows).map_err(|error| error.to_string())?;
            finish_timed_part(started.elapsed(), start_kib, bytes, u64::from(rows))
        }
        Mode::Engine => {
            let runtime = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .enable_all()
                .build()
                .map_err(|error| error.to_string())?;
            runtime.block_on(engine_report(rows))
        }
    }
}

fn start_timed_part() -> u64 {
    if !reset_peak_memory() {
        eprintln!("xlsx: could not reset the peak memory; peaks include the set-up");
    }
    memory_kib("VmRSS").unwrap_or(0)
}

fn finish_timed_part(elapsed: Duration, start_kib: u64, bytes: u64, rows: u64) -> Result<Measurement, String> {
    let peak_kib = memory_kib("VmHWM").ok_or("no VmHWM in /proc/self/status")?;
    Ok(Measurement { seconds: elapsed.as_secs_f64(), start_kib, peak_kib, bytes, rows })
}

/// Fills a memory store with `rows` active payments, then times the engine's report.
async fn engine_report(rows: u32) -> Result<Measurement, String> {
    let engine = PharmaPay::open(MemoryStore::new(), SystemClock, EngineOptions::default())
        .await
        .map_err(|error| error.to_string())?;
    let setup = pharmapay_benches::bench_onboarding();
    let session = engine.complete_onboarding(setup).await.map_err(|error| error.to_string())?;
    let admin = engine.authenticate(&session.token.token).await.map_err(|error| error.to_string())?;
    fill(engine.store(), rows).await?;

    let start_kib = start_timed_part();
    let started = Instant::now();
    let report =
        engine.transactions_report(&admin, TransactionFilter::default()).await.map_err(|error| error.to_string())?;
    let written = report.rows();
    let mut sink = CountingSink::default();
    report.save_to(&mut sink).map_err(|error| error.to_string())?;
    finish_timed_part(started.elapsed(), start_kib, sink.0, written)
}

/// Imports the vendors, invoices and payments of [`payment_row`] for `rows` payments.
async fn fill(store: &MemoryStore, rows: u32) -> Result<(), String> {
    let created_at = noon_utc(date(2023, 12, 1));
    let vendors: Vec<BulkVendor> = (0..VENDORS)
        .map(|vendor| BulkVendor {
            vendor: NewVendor::new(vendor_name(vendor), VendorType::Wholesaler),
            is_active: true,
            created_at,
        })
        .collect();
    let vendor_ids: Vec<VendorId> = store.load_vendors(vendors).await.map_err(|error| error.to_string())?;
    let n_invoices = rows.div_ceil(PAYMENTS_PER_INVOICE);
    let invoices: Vec<BulkInvoice> = (0..n_invoices)
        .map(|invoice| BulkInvoice {
            invoice: NewInvoice {
                vendor_id: vendor_ids[(invoice % VENDORS) as usize],
                branch_id: None,
                invoice_number: invoice_number(invoice),
                amount: amount(100_000_000),
                invoice_date: created_at,
                due_date: noon_utc(date(2026, 12, 31)),
                description: None,
            },
            is_active: true,
            created_at,
        })
        .collect();
    let invoice_ids = store.load_invoices(invoices).await.map_err(|error| error.to_string())?;
    let payments: Vec<BulkTransaction> = (0..rows)
        .map(|n| {
            let row = payment_row(n);
            BulkTransaction {
                transaction: NewTransaction {
                    invoice_id: invoice_ids[invoice_of(n) as usize],
                    amount: amount(row.cents),
                    transaction_date: noon_utc(row.paid_on),
                    transaction_type: row.kind,
                    reference: None,
                    description: row.description.map(str::to_owned),
                },
                is_active: true,
                created_at: noon_utc(row.paid_on),
            }
        })
        .collect();
    store.load_transactions(payments).await.map_err(|error| error.to_string())?;
    Ok(())
}

/// rust_xlsxwriter alone: the transactions sheet as the engine lays it out, in constant-memory
/// mode, saved into a counting sink. Returns the file's size.
fn write_plain(rows: u32) -> Result<u64, XlsxError> {
    let mut workbook = Workbook::new();
    let bold = Format::new().set_bold();
    let money = Format::new().set_num_format(MONEY_FORMAT);
    let day = Format::new().set_num_format("yyyy-mm-dd");
    let sheet = workbook.add_worksheet_with_constant_memory()?;
    sheet.set_name("Transactions")?;
    let headers = ["ID", "Invoice Number", "Vendor", "Amount", "Type", "Transaction Date", "Description"];
    let widths = [8.0, 20.0, 30.0, 16.0, 14.0, 18.0, 40.0];
    for (column, width) in widths.iter().enumerate() {
        sheet.set_column_width(column as u16, *width)?;
    }
    for (column, header) in headers.iter().enumerate() {
        sheet.write_string_with_format(0, column as u16, *header, &bold)?;
    }
    sheet.set_freeze_panes(1, 0)?;
    for n in 0..rows {
        let row = payment_row(n);
        let at = n + 1;
        sheet.write_number(at, 0, f64::from(n + 1))?;
        sheet.write_string(at, 1, &row.invoice_number)?;
        sheet.write_string(at, 2, &row.vendor_name)?;
        sheet.write_number_with_format(at, 3, row.cents as f64 / 100.0, &money)?;
        sheet.write_string(at, 4, row.kind.label())?;
        let paid_on =
            ExcelDateTime::from_ymd(row.paid_on.year() as u16, row.paid_on.month() as u8, row.paid_on.day() as u8)?;
        sheet.write_datetime_with_format(at, 5, paid_on, &day)?;
        if let Some(description) = row.description {
            sheet.write_string(at, 6, description)?;
        }
    }
    sheet.autofilter(0, 0, rows, 6)?;
    let mut sink = CountingSink::default();
    workbook.save_to_writer(&mut sink)?;
    Ok(sink.0)
}

/// Runs every measurement in a child process and prints the comparison.
fn compare(row_counts: &[u32], repeat: usize) -> Result<(), String> {
    let exe = std::env::current_exe().map_err(|error| error.to_string())?;
    let mut lines = vec![
        "| Rows | Engine s | rust_xlsxwriter s | Engine / alone | Engine peak MiB (rise) | Alone peak MiB (rise) | File MB engine / alone |"
            .to_owned(),
        "|---:|---:|---:|---:|---:|---:|---:|".to_owned(),
    ];
    for &rows in row_counts {
        let mut results = Vec::new();
        for mode in [Mode::Engine, Mode::Plain] {
            let mut runs = Vec::new();
            for _ in 0..repeat {
                let output = std::process::Command::new(&exe)
                    .args(["one", "--mode", if mode == Mode::Engine { "engine" } else { "plain" }])
                    .args(["--rows", &rows.to_string()])
                    .output()
                    .map_err(|error| error.to_string())?;
                if !output.status.success() {
                    return Err(String::from_utf8_lossy(&output.stderr).into_owned());
                }
                let value: serde_json::Value =
                    serde_json::from_slice(&output.stdout).map_err(|error| format!("bad child output: {error}"))?;
                let field = |name: &str| value[name].as_f64().unwrap_or(0.0);
                eprintln!(
                    "{mode:?} {rows}: {:.3} s, peak {:.1} MiB from {:.1} MiB, {} rows, {:.2} MB",
                    field("seconds"),
                    field("peak_kib") / 1024.0,
                    field("start_kib") / 1024.0,
                    field("rows"),
                    field("bytes") / 1e6
                );
                runs.push((field("seconds"), field("peak_kib"), field("start_kib"), field("bytes"), field("rows")));
            }
            runs.sort_by(|a, b| a.0.total_cmp(&b.0));
            let median = runs[runs.len() / 2];
            let peak = runs.iter().map(|run| run.1).fold(0.0, f64::max);
            let rise = runs.iter().map(|run| run.1 - run.2).fold(0.0, f64::max);
            results.push((median.0, peak, rise, median.3, median.4));
        }
        let (engine, plain) = (results[0], results[1]);
        if engine.4 as u32 != rows {
            return Err(format!("the engine wrote {} rows instead of {rows}", engine.4));
        }
        lines.push(format!(
            "| {rows} | {:.3} | {:.3} | {:.2} | {:.1} ({:+.1}) | {:.1} ({:+.1}) | {:.2} / {:.2} |",
            engine.0,
            plain.0,
            engine.0 / plain.0,
            engine.1 / 1024.0,
            engine.2 / 1024.0,
            plain.1 / 1024.0,
            plain.2 / 1024.0,
            engine.3 / 1e6,
            plain.3 / 1e6,
        ));
    }
    println!("{}", lines.join("\n"));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_are_deterministic_and_spread_over_invoices() {
        let first = payment_row(0);
        assert_eq!(first.invoice_number, "B1-0000001");
        assert_eq!(first.paid_on, date(2024, 1, 1));
        assert_eq!(first.description, Some("Monthly stock"));
        assert_eq!(payment_row(3).invoice_number, "B1-0000002");
        assert_eq!(payment_row(700).paid_on, date(2024, 1, 1));
        assert_eq!(payment_row(1).kind.label(), "Net Banking");
    }

    #[test]
    fn the_sink_counts_what_it_swallows() {
        let mut sink = CountingSink::default();
        sink.write_all(b"hello").unwrap();
        assert_eq!(sink.0, 5);
    }
}
