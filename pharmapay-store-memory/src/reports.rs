//! Settings, dashboard figures, the audit log and exports in memory: [`ReportStore`] for
//! [`MemoryStore`].
//!
//! Dashboard figures are read from the figures kept beside the rows (D12, D41); a new
//! `TimeZone` recounts the day figures under the same lock as the change. Exports read the
//! filtered records in id order after a cursor (D26).

use std::collections::{BTreeMap, BTreeSet, HashMap};

use pharmapay_core::BusinessCalendar;
use pharmapay_core::figures::{DayFigures, OpenFigures, VendorDayFigures, VendorFigures};
use pharmapay_core::ids::{InvoiceId, TransactionId, VendorId};
use pharmapay_core::invoices::{Invoice, InvoiceFilter};
use pharmapay_core::jiff::Timestamp;
use pharmapay_core::jiff::civil::Date;
use pharmapay_core::paging::PagePlace;
use pharmapay_core::reports::aging::{Aging, AgingBounds, AgingBuilder, AgingFigures, KeptOwed, TodaysAgingPage};
use pharmapay_core::reports::audit::{AuditEntry, AuditQuery};
use pharmapay_core::reports::dashboard::SummaryFigures;
use pharmapay_core::reports::dashboard::TopVendor;
use pharmapay_core::reports::setting::Setting;
use pharmapay_core::reports::statement::{
    StatementEntry, StatementFigures, StatementLineKind, StatementPage, StatementRows,
};
use pharmapay_core::rust_decimal::Decimal;
use pharmapay_core::store::ReportStore;
use pharmapay_core::store::{StoreResult, WriteContext};
use pharmapay_core::transactions::{Transaction, TransactionFilter};
use pharmapay_core::vendors::licence::LicenceHolder;
use pharmapay_core::vendors::{Vendor, VendorFilter};
use pharmapay_core::{Entity, StoreError};
use pharmapay_core::{Page, PageRequest};

use crate::transactions::transaction_matches;
use crate::vendors::vendor_matches;
use crate::{InvoiceRow, MemoryStore, VendorRow};

/// One batch of an export (D26): up to `limit` of `rows` with ids above `after` that `matches`,
/// in id order, each as `record` reads it.
fn export<R, T>(
    rows: &BTreeMap<i64, R>,
    (after, limit): (Option<i64>, u32),
    matches: impl Fn(i64, &R) -> bool,
    record: impl Fn(i64) -> Option<T>,
) -> Vec<T> {
    let first = after.map_or(i64::MIN, |id| id.saturating_add(1));
    rows.range(first..)
        .filter(|(id, row)| matches(**id, row))
        .take(limit as usize)
        .map(|(id, _)| record(*id).expect("listed above"))
        .collect()
}

impl ReportStore for MemoryStore {
    // Settings

    async fn list_settings(&self) -> StoreResult<Vec<Setting>> {
        Ok(self.read().settings.values().cloned().collect())
    }

    async fn get_setting(&self, key: &str) -> StoreResult<Option<Setting>> {
        Ok(self.read().settings.get(key).cloned())
    }

    async fn update_setting(
        &self,
        key: &str,
        value: String,
        ctx: WriteContext,
        days: Option<&BusinessCalendar>,
    ) -> StoreResult<Setting> {
        let mut state = self.write();
        let setting = state.settings.get_mut(key).ok_or(StoreError::NotFound(Entity::Setting))?;
        setting.value = value;
        let setting = setting.clone();
        if let Some(calendar) = days {
            state.recount_days(calendar.clone());
        }
        state.audit(ctx.audit("update", Entity::Setting, None));
        Ok(setting)
    }

    // Dashboard, from the kept figures (D41)

    async fn dashboard_figures(&self, first_recent_day: Date) -> StoreResult<SummaryFigures> {
        let state = self.read();
        let mut recent = DayFigures::default();
        for figures in state.figures.days.range(first_recent_day..).map(|(_, figures)| figures) {
            recent.apply(figures);
        }
        Ok(SummaryFigures { totals: state.figures.totals, recent })
    }

    async fn top_vendors(&self, limit: u32) -> StoreResult<Vec<TopVendor>> {
        let state = self.read();
        let mut ranked: Vec<(i64, &VendorRow, VendorFigures)> = state
            .vendors
            .iter()
            .filter(|(_, vendor)| vendor.is_active)
            .map(|(id, vendor)| (*id, vendor, state.vendor_figures(*id)))
            .collect();
        ranked.sort_by(|(a_id, a, a_figures), (b_id, b, b_figures)| {
            b_figures
                .outstanding()
                .cmp(&a_figures.outstanding())
                .then_with(|| a.name_key.cmp(&b.name_key))
                .then(a_id.cmp(b_id))
        });
        Ok(ranked
            .into_iter()
            .take(limit as usize)
            .map(|(id, vendor, figures)| TopVendor {
                vendor_id: VendorId(id),
                vendor_name: vendor.name.clone(),
                outstanding_balance: figures.outstanding().normalize(),
                total_invoices: u64::try_from(figures.active_invoices).unwrap_or(0),
            })
            .collect())
    }

    async fn recent_invoices(&self, limit: u32, today_start: Timestamp) -> StoreResult<Vec<Invoice>> {
        let state = self.read();
        let mut ids: Vec<(Timestamp, i64)> = state.invoices.iter().map(|(id, row)| (row.created_at, *id)).collect();
        ids.sort_by(|a, b| b.cmp(a));
        Ok(ids
            .into_iter()
            .take(limit as usize)
            .map(|(_, id)| state.invoice(id, today_start).expect("listed above"))
            .collect())
    }

    async fn open_invoices_due(&self, windows: &[(Timestamp, Timestamp)]) -> StoreResult<Vec<OpenFigures>> {
        let state = self.read();
        Ok(windows.iter().map(|(from, before)| state.figures.open_due_between(*from, *before)).collect())
    }

    async fn day_figures(&self, first: Date, last: Date) -> StoreResult<Vec<(Date, DayFigures)>> {
        let state = self.read();
        Ok(state.figures.days.range(first..=last).map(|(day, figures)| (*day, *figures)).collect())
    }

    // Reconciliation (D34-D36)

    async fn aging(&self, bounds: &AgingBounds, vendor_id: Option<VendorId>) -> StoreResult<Aging> {
        let state = self.read();
        let aging = state.aging_of(bounds, |vendor| vendor_id.is_none_or(|only| only == vendor));
        Ok(aging.finish(bounds.as_of))
    }

    async fn todays_aging_page(&self, bounds: &AgingBounds, page: PageRequest) -> StoreResult<Aging> {
        let state = self.read();
        // Vendors with an invoice or a payment dated after today, which the kept figures count
        // already (`TodaysAgingPage`).
        let mut disturbed: BTreeSet<VendorId> = state
            .invoices
            .values()
            .filter(|row| row.is_active && row.invoice_date >= bounds.counts_before)
            .map(|row| VendorId(row.vendor_id))
            .collect();
        for row in
            state.transactions.values().filter(|row| row.is_active && row.transaction_date >= bounds.counts_before)
        {
            disturbed.extend(state.invoices.get(&row.invoice_id).map(|invoice| VendorId(invoice.vendor_id)));
        }
        let mut plan = TodaysAgingPage::new(*bounds, page, disturbed);
        if plan.whole_is_better() {
            return Ok(plan.cut(state.aging_of(bounds, |_| true)));
        }
        let kept = |vendor_id: VendorId| KeptOwed {
            vendor_id,
            vendor_name: state.vendors.get(&vendor_id.get()).map(|row| row.name.clone()).unwrap_or_default(),
            owed: state.figures.vendor(vendor_id).owed,
        };
        // Every vendor owed something: the plan orders them and keeps the page's.
        let ranked: Vec<KeptOwed> = state
            .figures
            .vendors
            .iter()
            .filter(|(_, figures)| figures.owed > Decimal::ZERO)
            .map(|(vendor_id, _)| kept(*vendor_id))
            .collect();
        let owing_vendors = ranked.len() as u64;
        let exact = state.aging_of(bounds, |vendor| plan.disturbed().any(|disturbed| disturbed == vendor));
        let mut read = plan.choose(ranked, exact);
        read.extend(plan.disturbed());
        let mut open = Vec::new();
        for vendor_id in read {
            for invoice_id in state.invoices_by_vendor.get(&vendor_id.get()).into_iter().flatten() {
                let invoice = &state.invoices[invoice_id];
                let pending = invoice.pending();
                if invoice.is_active && pending > Decimal::ZERO {
                    open.push((vendor_id, bounds.bucket(invoice.due_date), pending, 1));
                }
            }
        }
        let mut kept_totals = AgingFigures::default();
        for (due_date, figures) in &state.figures.open_by_due_date {
            kept_totals.add(bounds.bucket(*due_date), figures.pending, u64::try_from(figures.invoices).unwrap_or(0));
        }
        let disturbed_kept: Vec<KeptOwed> = plan.disturbed().map(kept).collect();
        Ok(plan.finish(owing_vendors, &disturbed_kept, &open, kept_totals))
    }

    async fn statement_rows(
        &self,
        vendor_id: VendorId,
        from: Timestamp,
        before: Timestamp,
        calendar: &BusinessCalendar,
    ) -> StoreResult<StatementRows> {
        Ok(self.read().statement_between(vendor_id, (from, before), calendar))
    }

    async fn statement_page(
        &self,
        vendor_id: VendorId,
        (from_date, to_date): (Date, Date),
        calendar: &BusinessCalendar,
        page: PageRequest,
    ) -> StoreResult<(StatementFigures, PagePlace)> {
        let state = self.read();
        let days: Vec<(Date, VendorDayFigures)> = state
            .figures
            .vendor_days
            .range((vendor_id, from_date)..=(vendor_id, Date::MAX))
            .map(|((_, day), figures)| (*day, *figures))
            .collect();
        let balance = state.figures.vendor(vendor_id).statement_balance();
        let plan = StatementPage::new(page, (from_date, to_date), balance, &days);
        let entries = match plan.instants(calendar) {
            Some(range) => state.statement_between(vendor_id, range, calendar).entries,
            None => Vec::new(),
        };
        Ok(plan.finish(entries))
    }

    async fn licence_alerts(&self, before: Timestamp) -> StoreResult<Vec<LicenceHolder>> {
        let state = self.read();
        let due = state
            .vendors
            .iter()
            .filter(|(_, vendor)| vendor.is_active)
            .filter_map(|(id, vendor)| {
                let valid_until = vendor.drug_license_valid_until.filter(|until| *until < before)?;
                Some(LicenceHolder {
                    id: VendorId(*id),
                    name: vendor.name.clone(),
                    drug_license_number1: vendor.drug_license_number1.clone(),
                    valid_until,
                })
            })
            .collect();
        Ok(due)
    }

    // Audit

    async fn list_audit(&self, query: &AuditQuery) -> StoreResult<Page<AuditEntry>> {
        let state = self.read();
        let filter = &query.filter;
        let entries: Vec<&AuditEntry> = state
            .audit
            .iter()
            .rev()
            .filter(|entry| {
                filter.entity.as_deref().is_none_or(|entity| entry.entity.eq_ignore_ascii_case(entity))
                    && filter.entity_id.is_none_or(|id| entry.entity_id == Some(id))
                    && filter.user_id.is_none_or(|user| entry.user_id == Some(user))
                    && filter.from_date.is_none_or(|from| entry.at >= from)
                    && filter.to_date.is_none_or(|to| entry.at <= to)
            })
            .collect();
        let page = query.page.sorted_slice(entries, |a, b| b.at.cmp(&a.at).then(b.id.cmp(&a.id)));
        Ok(page.map(AuditEntry::clone))
    }

    // Exports

    async fn export_vendors(
        &self,
        filter: &VendorFilter,
        after: Option<VendorId>,
        limit: u32,
    ) -> StoreResult<Vec<Vendor>> {
        let state = self.read();
        let batch = (after.map(VendorId::get), limit);
        Ok(export(&state.vendors, batch, |_, row| vendor_matches(row, filter), |id| state.vendor(id)))
    }

    async fn export_invoices(
        &self,
        filter: &InvoiceFilter,
        today_start: Timestamp,
        after: Option<InvoiceId>,
        limit: u32,
    ) -> StoreResult<Vec<Invoice>> {
        let state = self.read();
        let batch = (after.map(InvoiceId::get), limit);
        let matches = |id, row: &InvoiceRow| state.invoice_matches(id, row, filter, today_start);
        Ok(export(&state.invoices, batch, matches, |id| state.invoice(id, today_start)))
    }

    async fn export_transactions(
        &self,
        filter: &TransactionFilter,
        after: Option<TransactionId>,
        limit: u32,
    ) -> StoreResult<Vec<Transaction>> {
        let state = self.read();
        let batch = (after.map(TransactionId::get), limit);
        Ok(export(
            &state.transactions,
            batch,
            |_, row| transaction_matches(row, state.invoice_branch(row.invoice_id), filter),
            |id| state.transaction(id),
        ))
    }
}

impl crate::State {
    /// The aging of `bounds.as_of` over the vendors `of_vendor` keeps (D34): the kept paid and
    /// credited totals less the payments and credit applications dated after the day (D44), added
    /// up by vendor and bucket.
    fn aging_of(&self, bounds: &AgingBounds, of_vendor: impl Fn(VendorId) -> bool) -> AgingBuilder {
        // The payments dated after the aging day, by invoice, to take back off the kept paid
        // totals: what each invoice owed then.
        let mut later: HashMap<i64, Decimal> = HashMap::new();
        for row in
            self.transactions.values().filter(|row| row.is_active && row.transaction_date >= bounds.counts_before)
        {
            *later.entry(row.invoice_id).or_default() += row.amount.get();
        }
        // D44: so are the credits applied after the day.
        for (invoice_id, amount) in self.applications_after(bounds.counts_before) {
            *later.entry(invoice_id).or_default() += amount;
        }
        let mut aging = AgingBuilder::new();
        for (id, row) in &self.invoices {
            let dated_by_then = row.is_active && row.invoice_date < bounds.counts_before;
            if !dated_by_then || !of_vendor(VendorId(row.vendor_id)) {
                continue;
            }
            let owed = row.pending() + later.get(id).copied().unwrap_or_default();
            let name = self.vendors.get(&row.vendor_id).map(|vendor| vendor.name.as_str()).unwrap_or("");
            aging.add_invoice(bounds, VendorId(row.vendor_id), name, row.due_date, owed);
        }
        aging
    }
}

impl crate::State {
    /// The rows of vendor `vendor_id`'s statement over `[from, before)` (D35).
    fn statement_between(
        &self,
        vendor_id: VendorId,
        (from, before): (Timestamp, Timestamp),
        calendar: &BusinessCalendar,
    ) -> StatementRows {
        let mut rows = StatementRows::default();
        let mut theirs: HashMap<i64, &str> = HashMap::new();
        for invoice_id in self.invoices_by_vendor.get(&vendor_id.get()).into_iter().flatten() {
            let invoice = &self.invoices[invoice_id];
            if !invoice.is_active {
                continue;
            }
            theirs.insert(*invoice_id, &invoice.invoice_number);
            if invoice.invoice_date < from {
                rows.invoiced_before += invoice.amount.get();
            } else if invoice.invoice_date < before {
                rows.entries.push(StatementEntry {
                    date: calendar.date_of(invoice.invoice_date),
                    kind: StatementLineKind::Invoice,
                    invoice_id: Some(InvoiceId(*invoice_id)),
                    invoice_number: Some(invoice.invoice_number.clone()),
                    transaction_id: None,
                    reference: None,
                    credit_id: None,
                    credit_number: None,
                    description: invoice.description.clone(),
                    amount: invoice.amount.get(),
                });
            }
        }
        for (id, payment) in self.transactions.iter().filter(|(_, payment)| payment.is_active) {
            let Some(number) = theirs.get(&payment.invoice_id) else { continue };
            if payment.transaction_date < from {
                rows.paid_before += payment.amount.get();
            } else if payment.transaction_date < before {
                rows.entries.push(StatementEntry {
                    date: calendar.date_of(payment.transaction_date),
                    kind: StatementLineKind::Payment,
                    invoice_id: Some(InvoiceId(payment.invoice_id)),
                    invoice_number: Some((*number).to_owned()),
                    transaction_id: Some(TransactionId(*id)),
                    reference: payment.reference.as_ref().map(|reference| reference.as_str().to_owned()),
                    credit_id: None,
                    credit_number: None,
                    description: payment.description.clone(),
                    amount: payment.amount.get(),
                });
            }
        }
        self.credit_lines(vendor_id, (from, before), calendar, &mut rows);
        rows
    }
}
