//! Storage for settings, dashboard figures, the audit log and exports: [`ReportStore`], part
//! of [`Store`](crate::store::Store).

use std::future::Future;

use jiff::Timestamp;
use jiff::civil::Date;

use crate::clock::BusinessCalendar;
use crate::figures::{DayFigures, OpenFigures};
use crate::ids::{InvoiceId, TransactionId, VendorId};
use crate::invoices::{Invoice, InvoiceFilter};
use crate::paging::{Page, PagePlace, PageRequest};
use crate::reports::aging::{Aging, AgingBounds};
use crate::reports::audit::{AuditEntry, AuditQuery};
use crate::reports::dashboard::SummaryFigures;
use crate::reports::dashboard::TopVendor;
use crate::reports::setting::Setting;
use crate::reports::statement::{StatementFigures, StatementRows};
use crate::store::{StoreResult, WriteContext};
use crate::transactions::{Transaction, TransactionFilter};
use crate::vendors::licence::LicenceHolder;
use crate::vendors::{Vendor, VendorFilter};

/// Storage for settings, dashboard figures, the audit log and exports.
pub trait ReportStore: Send + Sync + 'static {
    // Settings

    /// Every setting, by key.
    fn list_settings(&self) -> impl Future<Output = StoreResult<Vec<Setting>>> + Send;

    /// One setting.
    fn get_setting(&self, key: &str) -> impl Future<Output = StoreResult<Option<Setting>>> + Send;

    /// Changes a setting's value (`NotFound(Setting)` for an unknown key). With `days`, the
    /// business calendar of a new `TimeZone`, every figure kept per business day is recomputed
    /// in that calendar's days in the same transaction (D41).
    fn update_setting(
        &self,
        key: &str,
        value: String,
        ctx: WriteContext,
        days: Option<&BusinessCalendar>,
    ) -> impl Future<Output = StoreResult<Setting>> + Send;

    // Dashboard (D12), from kept figures (D41)

    /// The installation's totals and the sum of the day figures from `first_recent_day` on,
    /// read together.
    fn dashboard_figures(&self, first_recent_day: Date) -> impl Future<Output = StoreResult<SummaryFigures>> + Send;

    /// Active vendors ranked by outstanding balance (desc), then name key, then id.
    fn top_vendors(&self, limit: u32) -> impl Future<Output = StoreResult<Vec<TopVendor>>> + Send;

    /// Invoices, active and canceled, newest `created_at` first (then id desc).
    fn recent_invoices(
        &self,
        limit: u32,
        today_start: Timestamp,
    ) -> impl Future<Output = StoreResult<Vec<Invoice>>> + Send;

    /// For each half-open window `[from, before)` of due dates, the open invoices (active, still
    /// owing something) due in it, from the figures kept per due date (D32).
    fn open_invoices_due(
        &self,
        windows: &[(Timestamp, Timestamp)],
    ) -> impl Future<Output = StoreResult<Vec<OpenFigures>>> + Send;

    /// The kept figures of the business days from `first` to `last`, both included, by day;
    /// days without active payments may be left out.
    fn day_figures(&self, first: Date, last: Date)
    -> impl Future<Output = StoreResult<Vec<(Date, DayFigures)>>> + Send;

    // Reconciliation (D34-D36)

    /// The aging of `bounds.as_of` (D34): over the active invoices dated before
    /// `bounds.counts_before` (of `vendor_id` alone, if given), what each still owed then, its
    /// amount less its active payments dated before that instant, added up by vendor and by the
    /// bucket [`AgingBounds::bucket`] gives its due date, positive remainders only; answered as
    /// [`AgingBuilder::finish`] orders it.
    ///
    /// [`AgingBuilder::finish`]: crate::reports::aging::AgingBuilder::finish
    fn aging(
        &self,
        bounds: &AgingBounds,
        vendor_id: Option<VendorId>,
    ) -> impl Future<Output = StoreResult<Aging>> + Send;

    /// One page of today's aging (D34, D43), `bounds` being today's, as [`aging`](Self::aging)
    /// with no vendor would answer it cut to `page`, with the totals of the whole: from the kept
    /// figures (D41), through [`TodaysAgingPage`], in one snapshot.
    ///
    /// [`TodaysAgingPage`]: crate::reports::aging::TodaysAgingPage
    fn todays_aging_page(
        &self,
        bounds: &AgingBounds,
        page: PageRequest,
    ) -> impl Future<Output = StoreResult<Aging>> + Send;

    /// The rows of a statement of vendor `vendor_id` (D35) over the instants `[from, before)`:
    /// what was invoiced and paid before `from`, and the vendor's active invoices dated in the
    /// range with the active payments of its active invoices dated in the range, each entry's
    /// business day read in `calendar`.
    fn statement_rows(
        &self,
        vendor_id: VendorId,
        from: Timestamp,
        before: Timestamp,
        calendar: &BusinessCalendar,
    ) -> impl Future<Output = StoreResult<StatementRows>> + Send;

    /// One page of vendor `vendor_id`'s statement (D35, D43) over the business days
    /// `from_date` to `to_date` of `calendar`, as [`statement_rows`](Self::statement_rows) and
    /// [`statement::build`] would answer it cut to `page`, with the opening, totals and closing
    /// of the whole range: from the kept figures (D41), through [`StatementPage`], in one
    /// snapshot.
    ///
    /// [`statement::build`]: crate::reports::statement::build
    /// [`StatementPage`]: crate::reports::statement::StatementPage
    fn statement_page(
        &self,
        vendor_id: VendorId,
        range: (Date, Date),
        calendar: &BusinessCalendar,
        page: PageRequest,
    ) -> impl Future<Output = StoreResult<(StatementFigures, PagePlace)>> + Send;

    /// Active vendors whose drug licence is valid until an instant before `before` (D36), in
    /// any order: the engine puts them in the alerts' order.
    fn licence_alerts(&self, before: Timestamp) -> impl Future<Output = StoreResult<Vec<LicenceHolder>>> + Send;

    // Audit (D22)

    /// A page of audit entries, newest first (then id desc).
    fn list_audit(&self, query: &AuditQuery) -> impl Future<Output = StoreResult<Page<AuditEntry>>> + Send;

    // Exports (D26): the list filters, in id order, read in batches after a cursor, so a report
    // of any size streams without holding the table.

    /// Up to `limit` vendors matching `filter` with ids above `after`, in id order.
    fn export_vendors(
        &self,
        filter: &VendorFilter,
        after: Option<VendorId>,
        limit: u32,
    ) -> impl Future<Output = StoreResult<Vec<Vendor>>> + Send;

    /// Up to `limit` invoices matching `filter` with ids above `after`, in id order.
    fn export_invoices(
        &self,
        filter: &InvoiceFilter,
        today_start: Timestamp,
        after: Option<InvoiceId>,
        limit: u32,
    ) -> impl Future<Output = StoreResult<Vec<Invoice>>> + Send;

    /// Up to `limit` payments matching `filter` with ids above `after`, in id order.
    fn export_transactions(
        &self,
        filter: &TransactionFilter,
        after: Option<TransactionId>,
        limit: u32,
    ) -> impl Future<Output = StoreResult<Vec<Transaction>>> + Send;
}
