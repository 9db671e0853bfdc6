//! Settings, dashboard figures, the audit log and exports in memory: [`ReportStore`] for
//! [`MemoryStore`].
//!
//! Figures are computed by scanning the maps under the read lock (D12); exports read the
//! filtered records in id order after a cursor (D26).

use std::collections::BTreeMap;

use pharmapay_core::Page;
use pharmapay_core::dashboard::{PeriodTotal, Summary, TopVendor};
use pharmapay_core::domain::{
    AuditEntry, AuditQuery, Invoice, InvoiceFilter, Setting, Transaction, TransactionFilter, Vendor, VendorFilter,
    VendorTotals,
};
use pharmapay_core::ids::{InvoiceId, TransactionId, VendorId};
use pharmapay_core::jiff::Timestamp;
use pharmapay_core::rust_decimal::Decimal;
use pharmapay_core::store::ReportStore;
use pharmapay_core::store::{StoreResult, WriteContext};
use pharmapay_core::{Entity, StoreError};

use crate::ledger::{transaction_matches, vendor_matches};
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

    async fn update_setting(&self, key: &str, value: String, ctx: WriteContext) -> StoreResult<Setting> {
        let mut state = self.write();
        let setting = state.settings.get_mut(key).ok_or(StoreError::NotFound(Entity::Setting))?;
        setting.value = value;
        let setting = setting.clone();
        state.audit(ctx.audit("update", Entity::Setting, None));
        Ok(setting)
    }

    // Dashboard

    async fn dashboard_summary(&self, recent_from: Timestamp) -> StoreResult<Summary> {
        let state = self.read();
        let active_invoices = state.invoices.values().filter(|invoice| invoice.is_active);
        let total_due: Decimal = active_invoices.map(|invoice| invoice.amount.get() - invoice.paid).sum();
        let active_payments = state.transactions.values().filter(|payment| payment.is_active);
        let total_paid: Decimal = active_payments.clone().map(|payment| payment.amount.get()).sum();
        let recent = active_payments.filter(|payment| payment.transaction_date >= recent_from).count();
        Ok(Summary {
            total_vendors: state.vendors.len() as u64,
            total_invoices: state.invoices.len() as u64,
            total_due: total_due.normalize(),
            total_paid: total_paid.normalize(),
            recent_transactions: recent as u64,
        })
    }

    async fn top_vendors(&self, limit: u32) -> StoreResult<Vec<TopVendor>> {
        let state = self.read();
        let mut ranked: Vec<(i64, &VendorRow, VendorTotals, u64)> = state
            .vendors
            .iter()
            .filter(|(_, vendor)| vendor.is_active)
            .map(|(id, vendor)| {
                let (totals, count) = state.vendor_totals(*id);
                (*id, vendor, totals, count)
            })
            .collect();
        ranked.sort_by(|(a_id, a, a_totals, _), (b_id, b, b_totals, _)| {
            b_totals
                .outstanding_balance
                .cmp(&a_totals.outstanding_balance)
                .then_with(|| a.name_key.cmp(&b.name_key))
                .then(a_id.cmp(b_id))
        });
        Ok(ranked
            .into_iter()
            .take(limit as usize)
            .map(|(id, vendor, totals, count)| TopVendor {
                vendor_id: VendorId(id),
                vendor_name: vendor.name.clone(),
                outstanding_balance: totals.outstanding_balance,
                total_invoices: count,
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

    async fn payment_totals(&self, windows: &[(Timestamp, Timestamp)]) -> StoreResult<Vec<PeriodTotal>> {
        let state = self.read();
        let mut totals = vec![PeriodTotal::default(); windows.len()];
        for payment in state.transactions.values().filter(|payment| payment.is_active) {
            for (total, (start, end)) in totals.iter_mut().zip(windows) {
                if payment.transaction_date >= *start && payment.transaction_date < *end {
                    total.total_amount += payment.amount.get();
                    total.transaction_count += 1;
                }
            }
        }
        for total in &mut totals {
            total.total_amount = total.total_amount.normalize();
        }
        Ok(totals)
    }

    // Audit

    async fn list_audit(&self, query: &AuditQuery) -> StoreResult<Page<AuditEntry>> {
        let state = self.read();
        let filter = &query.filter;
        let entries: Vec<AuditEntry> = state
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
            .cloned()
            .collect();
        let mut entries = entries;
        entries.sort_by(|a, b| b.at.cmp(&a.at).then(b.id.cmp(&a.id)));
        Ok(query.page.slice(entries))
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
        Ok(export(&state.transactions, batch, |_, row| transaction_matches(row, filter), |id| state.transaction(id)))
    }
}
