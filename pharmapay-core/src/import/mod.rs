//! Importing vendors and invoices from the files pharmacies already have (D45).
//!
//! A file is hostile until read: [`table`] reads CSV or an xlsx's first worksheet row by row
//! within [`FILE_LIMITS`] and the bounds of D51, through `csv` (field by field) and `xlsx` (each
//! part streamed out of the archive by a reader of our own); [`cells`] reads one cell as a
//! field (Indian dates and amounts), and [`invoices`] and [`vendors`] turn each row into the
//! input of the matching create, checked by the same functions as `POST /api/invoices` and
//! `POST /api/vendors` (D1, D2, D4, D36, D37).
//! Whatever needs the stored records (the vendor a row names, an invoice or vendor it repeats,
//! a licence that blocks it) is [`crate::rules::imports`]' to decide, under the store's lock.
//! Errors are kept per row, keyed `row<N>.<field>` ([`RowErrors`]).

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

pub use file::*;
