//! Importing vendors and invoices from the files pharmacies already have (D45).
//!
//! A file is hostile until read: [`table`] reads CSV or an xlsx's first worksheet row by row
//! within [`FILE_LIMITS`] and the bounds of D51, through `csv` (field by field) and `xlsx` (each
//! part streamed out of the archive by a reader of our own); [`cells`] reads one cell as a
//! field (Indian dates and amounts), and [`invoices`] and [`vendors`] turn each row into the
//! input of the matching create, checked by the same functions as `POST /api/invoices` and
//! `POST /api/vendors` (D1, D2, D4, D36, D37).
//! Whatever needs the stored records (the vendor a row names, an invoice or vendor it repeats,
//! a licence that blocks it) is [`crate::imports::rules`]' to decide, under the store's lock.
//! Errors are kept per row, keyed `row<N>.<field>` ([`RowErrors`]).

mod engine;
pub mod rules;
pub mod store;

pub mod cells;
mod csv;
mod file;
pub mod invoices;
pub mod table;
pub mod template;
pub mod vendors;
mod xlsx;

pub use crate::base::faults::{MAX_ERROR_KEYS, RowErrors};

pub use invoices::InvoiceRow;
pub use table::{Cell, FileError, FileFormat, Limits};
pub use vendors::VendorRow;

use crate::idempotency::IdempotencyRequest;
pub use file::*;
use std::sync::Arc;

/// Where a long import is (for a command line's progress).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ImportStage {
    /// The file is being read: this many data rows so far.
    Reading(usize),
    /// The file was read: this many data rows.
    Read(usize),
    /// The rows are being checked against the stored records and, unless a dry run, written.
    Writing(usize),
}

/// Told of each [`ImportStage`] an import reaches.
pub type ImportProgress = Arc<dyn Fn(ImportStage) + Send + Sync>;

/// An import's request: its file, whether it is a dry run, its idempotency key (D23) and who
/// is told of its progress.
pub struct ImportRequest<'a> {
    /// The file.
    pub file: ImportFile,
    /// Check everything and write nothing.
    pub dry_run: bool,
    /// The create's key, if any; a dry run claims none, as it writes nothing.
    pub idempotency: Option<&'a IdempotencyRequest>,
    /// Told of each stage, if anyone.
    pub progress: Option<ImportProgress>,
}

impl<'a> ImportRequest<'a> {
    /// A request for `file`, written for real, without a key or progress.
    pub fn new(file: ImportFile) -> Self {
        Self { file, dry_run: false, idempotency: None, progress: None }
    }
}
