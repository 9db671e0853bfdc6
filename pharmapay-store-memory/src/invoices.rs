//! Invoices in memory: [`InvoiceStore`] for [`MemoryStore`]. An invoice's status is computed
//! from its kept paid total (D10), its number is unique among active invoices (D4), and every
//! write takes a snapshot of the rows whose figures it may move and keeps the figures as the
//! rows then stand (D41).

use pharmapay_core::branches::rules as branch_rules;
use pharmapay_core::invoices::is_open;
use std::collections::HashSet;

use pharmapay_core::base::restore;
use pharmapay_core::credits::rules as credit_rules;
use pharmapay_core::ids::{BranchId, InvoiceId, VendorId};
use pharmapay_core::invoices::{
    Invoice, InvoiceBrief, InvoiceDetail, InvoiceFilter, InvoiceQuery, InvoiceSortKey, InvoiceStatus, NewInvoice,
};
use pharmapay_core::jiff::Timestamp;
use pharmapay_core::rust_decimal::Decimal;
use pharmapay_core::store::{InvoiceStore, StoreResult, UniqueKey, WriteContext};
use pharmapay_core::text::key;
use pharmapay_core::{Entity, Page, StoreError};

use crate::figures::Touch;
use crate::{InvoiceRow, MemoryStore, SortKey, State, by_key_then_id};

impl State {
    /// Inserts an invoice with nothing paid yet, active or not, made at `at`, and files it
    /// under its vendor; answers its id.
    pub(crate) fn add_invoice(&mut self, invoice: NewInvoice, is_active: bool, at: Timestamp) -> i64 {
        let id = self.next("invoice");
        let before = self.snapshot(&[Touch::Invoice(id)]);
        let vendor_id = invoice.vendor_id.get();
        let row = InvoiceRow {
            vendor_id,
            branch_id: branch_rules::branch_of_create(invoice.branch_id).get(),
            number_key: key(&invoice.invoice_number),
            invoice_number: invoice.invoice_number,
            amount: invoice.amount,
            paid: Decimal::ZERO,
            credited: Decimal::ZERO,
            invoice_date: invoice.invoice_date,
            due_date: invoice.due_date,
            description: invoice.description,
            is_active,
            created_at: at,
            updated_at: at,
        };
        self.invoices.insert(id, row);
        self.invoices_by_vendor.entry(vendor_id).or_default().insert(id);
        self.keep_figures(before);
        id
    }

    pub(crate) fn invoice(&self, id: i64, today_start: Timestamp) -> Option<Invoice> {
        let row = self.invoices.get(&id)?;
        let vendor_name = self.vendors.get(&row.vendor_id).map(|vendor| vendor.name.clone()).unwrap_or_default();
        let pending = row.pending();
        Some(Invoice {
            id: InvoiceId(id),
            vendor_id: VendorId(row.vendor_id),
            vendor_name,
            branch_id: BranchId(row.branch_id),
            branch_code: self.branch_code(row.branch_id),
            invoice_number: row.invoice_number.clone(),
            amount: row.amount,
            paid_amount: row.paid.normalize(),
            credited_amount: row.credited.normalize(),
            invoice_date: row.invoice_date,
            due_date: row.due_date,
            description: row.description.clone(),
            is_active: row.is_active,
            created_at: row.created_at,
            updated_at: row.updated_at,
            status: InvoiceStatus::compute(row.is_active, pending, row.due_date, today_start),
        })
    }

    pub(crate) fn invoice_brief(&self, id: i64) -> InvoiceBrief {
        let row = &self.invoices[&id];
        InvoiceBrief {
            id: InvoiceId(id),
            invoice_number: row.invoice_number.clone(),
            vendor_id: VendorId(row.vendor_id),
            vendor_name: self.vendors.get(&row.vendor_id).map(|vendor| vendor.name.clone()).unwrap_or_default(),
            branch_id: BranchId(row.branch_id),
            branch_code: self.branch_code(row.branch_id),
            amount: row.amount,
            pending_amount: row.pending().normalize(),
        }
    }

    pub(crate) fn number_taken(&self, number_key: &str, except: Option<i64>) -> bool {
        self.invoices
            .iter()
            .any(|(id, invoice)| invoice.is_active && invoice.number_key == number_key && Some(*id) != except)
    }

    pub(crate) fn active_invoice(&self, id: i64) -> bool {
        self.invoices.get(&id).is_some_and(|invoice| invoice.is_active)
    }

    pub(crate) fn invoice_status(&self, id: i64, today_start: Timestamp) -> InvoiceStatus {
        let row = &self.invoices[&id];
        InvoiceStatus::compute(row.is_active, row.pending(), row.due_date, today_start)
    }

    pub(crate) fn invoice_matches(
        &self,
        id: i64,
        row: &InvoiceRow,
        filter: &InvoiceFilter,
        today_start: Timestamp,
    ) -> bool {
        filter.is_active.is_none_or(|active| row.is_active == active)
            && filter.vendor_id.is_none_or(|vendor| row.vendor_id == vendor.get())
            && filter.branches.as_deref().is_none_or(|branches| branches.contains(&BranchId(row.branch_id)))
            && filter.invoice_number.as_deref().is_none_or(|number| row.number_key.contains(number))
            && filter.search.as_deref().is_none_or(|search| {
                row.number_key.contains(search) || self.vendor_name_key(row.vendor_id).contains(search)
            })
            && filter.from_date.is_none_or(|from| row.invoice_date >= from)
            && filter.to_date.is_none_or(|to| row.invoice_date <= to)
            && filter.min_amount.is_none_or(|min| row.amount.get() >= min)
            && filter.max_amount.is_none_or(|max| row.amount.get() <= max)
            && filter.status.is_none_or(|status| self.invoice_status(id, today_start) == status)
            && filter.due_window.is_none_or(|(from, before)| {
                // D32: active invoices still owing something, due within the window.
                is_open(row.is_active, row.pending()) && row.due_date >= from && row.due_date < before
            })
            // D33: overpaid invoices owe less than nothing.
            && filter.overpaid.is_none_or(|overpaid| (row.pending() < Decimal::ZERO) == overpaid)
    }

    /// The number keys of the active invoices, for an import's many numbers.
    pub(crate) fn active_number_keys(&self) -> HashSet<String> {
        self.invoices.values().filter(|invoice| invoice.is_active).map(|invoice| invoice.number_key.clone()).collect()
    }

    pub(crate) fn add_paid(&mut self, invoice_id: i64, amount: Decimal) {
        if let Some(invoice) = self.invoices.get_mut(&invoice_id) {
            invoice.paid += amount;
        }
    }
}

impl InvoiceStore for MemoryStore {
    async fn insert_invoice(
        &self,
        invoice: NewInvoice,
        ctx: WriteContext,
        today_start: Timestamp,
    ) -> StoreResult<Invoice> {
        let mut state = self.write();
        let number_key = key(&invoice.invoice_number);
        if !state.active_vendor(invoice.vendor_id.get()) {
            return Err(StoreError::ParentInactive(Entity::Vendor));
        }
        if !state.active_branch(branch_rules::branch_of_create(invoice.branch_id).get()) {
            return Err(StoreError::ParentInactive(Entity::Branch));
        }
        if state.number_taken(&number_key, None) {
            return Err(StoreError::Conflict(UniqueKey::InvoiceNumber));
        }
        state.check_licence(invoice.vendor_id.get(), invoice.invoice_date)?;
        let id = state.add_invoice(invoice, true, ctx.at);
        state.finish_write(&ctx, "create", Entity::Invoice, id);
        Ok(state.invoice(id, today_start).expect("just written"))
    }

    async fn get_invoice(&self, id: InvoiceId, today_start: Timestamp) -> StoreResult<Option<InvoiceDetail>> {
        let state = self.read();
        let Some(invoice) = state.invoice(id.get(), today_start) else { return Ok(None) };
        let vendor = state.vendor_brief(invoice.vendor_id.get()).expect("an invoice's vendor exists");
        Ok(Some(InvoiceDetail { invoice, vendor }))
    }

    async fn update_invoice(
        &self,
        id: InvoiceId,
        invoice: NewInvoice,
        ctx: WriteContext,
        today_start: Timestamp,
    ) -> StoreResult<Invoice> {
        let mut state = self.write();
        if !state.active_invoice(id.get()) {
            return Err(StoreError::NotFound(Entity::Invoice));
        }
        // D49: another branch's invoice is missing to the writer.
        branch_rules::check_in_scope(&ctx.scope, BranchId(state.invoices[&id.get()].branch_id), Entity::Invoice)?;
        let number_key = key(&invoice.invoice_number);
        if !state.active_vendor(invoice.vendor_id.get()) {
            return Err(StoreError::ParentInactive(Entity::Vendor));
        }
        let branch_now = state.invoices[&id.get()].branch_id;
        let branch = invoice.branch_id.map_or(branch_now, BranchId::get);
        if invoice.branch_id.is_some() && !state.active_branch(branch) {
            return Err(StoreError::ParentInactive(Entity::Branch));
        }
        if state.number_taken(&number_key, Some(id.get())) {
            return Err(StoreError::Conflict(UniqueKey::InvoiceNumber));
        }
        state.check_licence(invoice.vendor_id.get(), invoice.invoice_date)?;
        if let Some(facts) = state.invoice_facts(id.get()) {
            credit_rules::check_invoice_move(&facts, invoice.vendor_id)?;
            credit_rules::check_branch_move(&facts, BranchId(branch))?;
        }
        let before = state.snapshot(&state.invoice_and_payments(id.get()));
        let row = state.invoices.get_mut(&id.get()).expect("checked above");
        let old_vendor = row.vendor_id;
        row.vendor_id = invoice.vendor_id.get();
        row.branch_id = branch;
        row.invoice_number = invoice.invoice_number;
        row.number_key = number_key;
        row.amount = invoice.amount;
        row.invoice_date = invoice.invoice_date;
        row.due_date = invoice.due_date;
        row.description = invoice.description;
        row.updated_at = ctx.at;
        if old_vendor != invoice.vendor_id.get() {
            if let Some(set) = state.invoices_by_vendor.get_mut(&old_vendor) {
                set.remove(&id.get());
            }
            state.invoices_by_vendor.entry(invoice.vendor_id.get()).or_default().insert(id.get());
        }
        state.keep_figures(before);
        state.finish_write(&ctx, "update", Entity::Invoice, id.get());
        Ok(state.invoice(id.get(), today_start).expect("just written"))
    }

    async fn delete_invoice(&self, id: InvoiceId, ctx: WriteContext) -> StoreResult<()> {
        let mut state = self.write();
        let row =
            state.invoices.get(&id.get()).filter(|row| row.is_active).ok_or(StoreError::NotFound(Entity::Invoice))?;
        branch_rules::check_in_scope(&ctx.scope, BranchId(row.branch_id), Entity::Invoice)?;
        let mut touched = state.invoice_and_payments(id.get());
        touched.extend(state.credits_on_invoice(id.get()));
        let before = state.snapshot(&touched);
        // D44: the applications on it go with it; their credits have them available again.
        state.release_invoice_applications(id.get());
        let row = state.invoices.get_mut(&id.get()).expect("checked above");
        row.is_active = false;
        row.updated_at = ctx.at;
        state.keep_figures(before);
        state.finish_write(&ctx, "delete", Entity::Invoice, id.get());
        Ok(())
    }

    async fn restore_invoice(&self, id: InvoiceId, ctx: WriteContext, today_start: Timestamp) -> StoreResult<Invoice> {
        let mut state = self.write();
        let row =
            state.invoices.get(&id.get()).filter(|row| !row.is_active).ok_or(StoreError::NotFound(Entity::Invoice))?;
        branch_rules::check_in_scope(&ctx.scope, BranchId(row.branch_id), Entity::Invoice)?;
        restore::check_parent(Entity::Vendor, state.active_vendor(row.vendor_id))?;
        if state.number_taken(&row.number_key.clone(), Some(id.get())) {
            return Err(StoreError::Conflict(UniqueKey::InvoiceNumber));
        }
        // D48: under Block, restoring is refused as creating would be (D36).
        let (vendor_id, invoice_date) = (row.vendor_id, row.invoice_date);
        state.check_licence(vendor_id, invoice_date)?;
        let before = state.snapshot(&state.invoice_and_payments(id.get()));
        let row = state.invoices.get_mut(&id.get()).expect("checked above");
        row.is_active = true;
        row.updated_at = ctx.at;
        state.keep_figures(before);
        state.finish_write(&ctx, "restore", Entity::Invoice, id.get());
        Ok(state.invoice(id.get(), today_start).expect("just written"))
    }

    async fn list_invoices(&self, query: &InvoiceQuery, today_start: Timestamp) -> StoreResult<Page<Invoice>> {
        let state = self.read();
        let vendor_key =
            |vendor_id: i64| state.vendors.get(&vendor_id).map(|vendor| vendor.name_key.as_str()).unwrap_or("");
        let rows: Vec<(SortKey, i64)> = state
            .invoices
            .iter()
            .filter(|(id, row)| state.invoice_matches(**id, row, &query.filter, today_start))
            .map(|(id, row)| {
                let key = match query.sort.key {
                    InvoiceSortKey::InvoiceDate => SortKey::Instant(row.invoice_date),
                    InvoiceSortKey::DueDate => SortKey::Instant(row.due_date),
                    InvoiceSortKey::Amount => SortKey::Money(row.amount.get()),
                    InvoiceSortKey::PendingAmount => SortKey::Money(row.pending()),
                    InvoiceSortKey::PaidAmount => SortKey::Money(row.paid),
                    InvoiceSortKey::InvoiceNumber => SortKey::Text(&row.number_key),
                    InvoiceSortKey::VendorName => SortKey::Text(vendor_key(row.vendor_id)),
                };
                (key, *id)
            })
            .collect();
        let page = query.page.sorted_slice(rows, by_key_then_id(query.sort.dir));
        Ok(page.map(|(_, id)| state.invoice(id, today_start).expect("listed above")))
    }
}
