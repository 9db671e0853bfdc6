//! Streaming a report (D26): the engine's report use cases read the records in batches after
//! a cursor and write them into a constant-memory sheet on a background thread (`background`,
//! D48), so a report of any size streams without holding the table or an async worker.

use std::time::Instant;

use jiff::Timestamp;
use tracing::{info, instrument};

use super::{Report, ReportError, ReportKind, SheetWriter};
use crate::access::{Access, Action, Collection, Principal};
use crate::engine::{PharmaPay, licensed, store_error};
use crate::error::{Error, Result};
use crate::ids::{InvoiceId, TransactionId, VendorId};
use crate::invoices::{Invoice, InvoiceFilter};
use crate::store::{Store, StoreError};
use crate::transactions::{Transaction, TransactionFilter};
use crate::vendors::licence::LicenceBounds;
use crate::vendors::{Vendor, VendorFilter};

impl<S: Store> PharmaPay<S> {
    /// The vendors report: active vendors matching `filter` (its `is_active` is ignored).
    ///
    /// # Errors
    /// [`Error::Forbidden`] without `Vendor:Read`; store failures.
    #[instrument(skip_all)]
    pub async fn vendors_report(&self, principal: &Principal, filter: VendorFilter) -> Result<Report> {
        principal.require(Access::new(Collection::Vendor, Action::Read))?;
        let bounds = self.licence_bounds().await?;
        let licence = filter.license_status.map(|status| (status, bounds));
        self.build_report(Export::Vendors(VendorFilter { is_active: true, licence, ..filter }, bounds)).await
    }

    /// The invoices report: active invoices matching `filter` (its `is_active` is ignored).
    ///
    /// # Errors
    /// [`Error::Forbidden`] without `Invoice:Read`; store failures.
    #[instrument(skip_all)]
    pub async fn invoices_report(&self, principal: &Principal, filter: InvoiceFilter) -> Result<Report> {
        principal.require(Access::new(Collection::Invoice, Action::Read))?;
        let (filter, today_start) =
            self.invoice_filter(principal, InvoiceFilter { is_active: Some(true), ..filter }).await?;
        self.build_report(Export::Invoices(filter, today_start)).await
    }

    /// The transactions report: active payments matching `filter` (its `is_active` is ignored).
    ///
    /// # Errors
    /// [`Error::Forbidden`] without `Transaction:Read`; store failures.
    #[instrument(skip_all)]
    pub async fn transactions_report(&self, principal: &Principal, filter: TransactionFilter) -> Result<Report> {
        principal.require(Access::new(Collection::Transaction, Action::Read))?;
        // D49: the caller's branches, or those of them the filter names.
        let branches = self.branch_filter(principal, filter.branches.as_deref()).await?;
        self.build_report(Export::Transactions(TransactionFilter { is_active: true, branches, ..filter })).await
    }

    async fn export_batch(&self, export: &Export, after: Option<i64>) -> Result<Vec<ExportRow>> {
        let rows = match export {
            Export::Vendors(filter, bounds) => {
                let batch = self.store().export_vendors(filter, after.map(VendorId), REPORT_BATCH).await;
                let vendors = batch.map_err(store_error)?.into_iter();
                vendors.map(|vendor| ExportRow::Vendor(licensed(bounds, vendor))).collect()
            }
            Export::Invoices(filter, today_start) => {
                let batch =
                    self.store().export_invoices(filter, *today_start, after.map(InvoiceId), REPORT_BATCH).await;
                batch.map_err(store_error)?.into_iter().map(ExportRow::Invoice).collect()
            }
            Export::Transactions(filter) => {
                let batch = self.store().export_transactions(filter, after.map(TransactionId), REPORT_BATCH).await;
                batch.map_err(store_error)?.into_iter().map(ExportRow::Transaction).collect()
            }
        };
        Ok(rows)
    }

    /// Reads the records in batches and writes them on a background thread, so the async
    /// workers stay free while the sheet is written.
    async fn build_report(&self, export: Export) -> Result<Report> {
        let kind = export.kind();
        let calendar = self.calendar().await?;
        let currency = self.currency().await?;
        let now = self.now();
        let report_error = |error: ReportError| Error::Store(StoreError::backend(error));
        let started = Instant::now();
        let mut rows_read = 0usize;
        let mut next_progress = REPORT_PROGRESS_EVERY;
        let mut after = None;
        let (sender, mut receiver) = tokio::sync::mpsc::channel::<Vec<ExportRow>>(2);
        // D48: the sheet is written on a thread of lower priority, so a report of millions of
        // rows takes the processor time that answering everyone else leaves.
        let writer = crate::background::run("pharmapay-report", move || -> std::result::Result<Report, ReportError> {
            let mut sheet = SheetWriter::new(kind, &currency, calendar, now)?;
            while let Some(batch) = receiver.blocking_recv() {
                for row in &batch {
                    row.write(&mut sheet)?;
                }
            }
            sheet.finish()
        });
        loop {
            let batch = self.export_batch(&export, after).await?;
            let Some(last) = batch.last() else { break };
            after = Some(last.id());
            let last_batch = batch.len() < REPORT_BATCH as usize;
            rows_read += batch.len();
            if sender.send(batch).await.is_err() {
                // The writer stopped on an error, which its answer reports.
                break;
            }
            if rows_read >= next_progress {
                info!(report = kind.name(), rows = rows_read, "writing report");
                next_progress += REPORT_PROGRESS_EVERY;
            }
            if last_batch {
                break;
            }
        }
        drop(sender);
        let report = writer.await.map_err(|failed| Error::Store(StoreError::backend(failed)))?.map_err(report_error)?;
        info!(
            report = kind.name(),
            rows = report.rows(),
            elapsed_ms = started.elapsed().as_millis() as u64,
            "report ready"
        );
        Ok(report)
    }
}

impl<S: Store> PharmaPay<S> {
    /// The `Currency` setting's symbol, which money cells show.
    pub(super) async fn currency(&self) -> Result<String> {
        let setting = self.store().get_setting(crate::reports::setting::CURRENCY).await.map_err(store_error)?;
        Ok(setting.map(|setting| setting.value).unwrap_or_default())
    }
}

/// Records read from the store per batch while building a report.
pub const REPORT_BATCH: u32 = 1_000;
/// How often a long report logs its progress, in rows.
const REPORT_PROGRESS_EVERY: usize = 50_000;

/// What a report reads.
enum Export {
    /// With today's licence bounds (D36).
    Vendors(VendorFilter, LicenceBounds),
    Invoices(InvoiceFilter, Timestamp),
    Transactions(TransactionFilter),
}

impl Export {
    fn kind(&self) -> ReportKind {
        match self {
            Export::Vendors(..) => ReportKind::Vendors,
            Export::Invoices(..) => ReportKind::Invoices,
            Export::Transactions(_) => ReportKind::Transactions,
        }
    }
}

/// One record on its way into a report.
enum ExportRow {
    Vendor(Vendor),
    Invoice(Invoice),
    Transaction(Transaction),
}

impl ExportRow {
    fn id(&self) -> i64 {
        match self {
            ExportRow::Vendor(vendor) => vendor.id.get(),
            ExportRow::Invoice(invoice) => invoice.id.get(),
            ExportRow::Transaction(transaction) => transaction.id.get(),
        }
    }

    fn write(&self, sheet: &mut SheetWriter) -> std::result::Result<(), ReportError> {
        match self {
            ExportRow::Vendor(vendor) => sheet.vendor(vendor),
            ExportRow::Invoice(invoice) => sheet.invoice(invoice),
            ExportRow::Transaction(transaction) => sheet.transaction(transaction),
        }
    }
}
