//! Storage for imports of files (D45): [`FileImportStore`], part of [`crate::store::Store`].

use std::future::Future;

use crate::imports::{ImportSummary, InvoiceRow, VendorRow};
use crate::store::{StoreResult, WriteContext};

/// Storage for the rows of an imported file (D45). Each call is one transaction, all or
/// nothing: it locks and loads the active records the rows name, asks
/// [`crate::imports::rules`] what the rows create, and writes only when every row passed.
pub trait FileImportStore: Send + Sync + 'static {
    /// Imports invoice rows: loads and locks the active vendors named by
    /// [`crate::imports::rules::InvoiceKeys::of`] and the active invoices holding its numbers,
    /// reads `ExpiredLicensePolicy` (D36), and asks [`crate::imports::rules::plan_invoices`]
    /// (its row errors are `Rows`). Unless `dry_run`, inserts the planned invoices, each with
    /// its `create` audit entry (D22) and its share of the kept figures (D41), completes `ctx`'s
    /// idempotency claim with [`ImportSummary::to_claim_id`] (D23) and commits; a dry run
    /// writes nothing. A number taken by a write that raced past the check is
    /// `Conflict(InvoiceNumber)` and writes nothing.
    fn import_invoice_rows(
        &self,
        rows: Vec<InvoiceRow>,
        ctx: WriteContext,
        dry_run: bool,
    ) -> impl Future<Output = StoreResult<ImportSummary>> + Send;

    /// Imports vendor rows as [`FileImportStore::import_invoice_rows`] does invoices: the
    /// active vendors named by [`crate::imports::rules::VendorKeys::of`], judged by
    /// [`crate::imports::rules::plan_vendors`]; a GSTIN taken by a write that raced past the
    /// check is `Conflict(Gstin)` (D37).
    fn import_vendor_rows(
        &self,
        rows: Vec<VendorRow>,
        ctx: WriteContext,
        dry_run: bool,
    ) -> impl Future<Output = StoreResult<ImportSummary>> + Send;
}
