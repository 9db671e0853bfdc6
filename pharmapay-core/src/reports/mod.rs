//! Excel reports of vendors, invoices and payments (spec, Reports; D26).
//!
//! A report is built in two steps. [`crate::PharmaPay::vendors_report`] and its siblings read
//! the matching records from the store in batches, in id order, and write each row as it
//! arrives into a worksheet kept in "constant memory" mode: rows go to a temporary file, so
//! memory stays flat whatever the row count. The result is a [`Report`]; its
//! [`Report::save_to`] then writes the finished `.xlsx` into any `std::io::Write`, which can be
//! a file, a buffer or a stream to a client. Errors from the store surface before anything is
//! written out.
//!
//! A report with more rows than one worksheet holds continues on further worksheets named after
//! the first with ` (2)`, ` (3)`... appended, each with the same header (D42).
//!
//! The sheet is meant to be read by people: a bold, frozen header row with an autofilter,
//! sensible column widths, amounts as numbers in a two-decimal format showing the `Currency`
//! setting's symbol, dates as real Excel dates in the business time zone, payment types
//! written `Cash`, `UPI` or `Net Banking`, and statuses as text.
//!
//! Excel keeps every number as a binary double, so an amount beyond fifteen significant digits
//! may show rounded in its last digit inside the spreadsheet; the API's figures stay exact.
//!
//! # Layout
//! - `setting.rs`: settings (D3); `dashboard.rs`: the dashboard's figures (D12); `audit.rs`: the
//!   audit log (D22); `aging.rs` and `statement.rs`: the payables aging and vendor statements
//!   (D34, D35).
//! - `engine.rs`: the use cases of settings, the dashboard and the audit log; `reconciling.rs`:
//!   those of the aging, vendor statements and licence alerts (D34-D36).
//! - `store.rs`: [`store::ReportStore`], what a store offers for all of them.
//! - `sheet.rs` holds the sheet: [`ReportKind`], [`Report`] and the writer of its rows.
//!   `stream.rs` holds the engine's list reports, which read the store in batches of
//!   [`REPORT_BATCH`] and feed the writer; `reconciliation.rs` the aging and the statement.

pub mod aging;
pub mod audit;
pub mod dashboard;
mod engine;
mod reconciling;
pub mod setting;
pub mod statement;
pub mod store;

mod reconciliation;
mod sheet;
mod stream;

pub use stream::REPORT_BATCH;

pub use sheet::*;
