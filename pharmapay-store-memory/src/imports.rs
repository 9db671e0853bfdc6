//! Bulk imports in memory: [`ImportStore`] and the file imports of D45, [`FileImportStore`],
//! for [`MemoryStore`].
//!
//! Each call checks its whole batch before writing any of it, so a refused batch changes
//! nothing; the rules are [`vendor_rules`]' and [`ledger`]'s.

use std::collections::{HashMap, HashSet};

use pharmapay_core::domain::NewVendor;
use pharmapay_core::domain::gstin::Gstin;
use pharmapay_core::ids::{InvoiceId, TransactionId, VendorCreditId, VendorId};
use pharmapay_core::import::{ImportPlan, ImportSummary, InvoiceRow, VendorRow};
use pharmapay_core::rules::imports::{self, InvoiceKeys, StoredInvoice, StoredVendor};
use pharmapay_core::rules::vendors as vendor_rules;
use pharmapay_core::rules::{ledger, references};
use pharmapay_core::rust_decimal::Decimal;
use pharmapay_core::store::{FileImportStore, StoreResult, WriteContext};
use pharmapay_core::store::{
    ImportStore, ImportedCredit, ImportedInvoice, ImportedTransaction, ImportedVendor, UniqueKey,
};
use pharmapay_core::text::key;
use pharmapay_core::{Entity, StoreError};

use crate::{MemoryStore, State};

impl ImportStore for MemoryStore {
    async fn import_credits(&self, credits: Vec<ImportedCredit>) -> StoreResult<Vec<VendorCreditId>> {
        self.write().import_credits(credits)
    }

    async fn import_vendors(&self, vendors: Vec<ImportedVendor>) -> StoreResult<Vec<VendorId>> {
        let mut state = self.write();
        let mut gstins = HashSet::new();
        for imported in &vendors {
            vendor_rules::check_insert(imported.vendor.vendor_type)?;
            // D37: a GSTIN free among stored active vendors and the batch's.
            if imported.is_active
                && let Some(gstin) = &imported.vendor.gstin
            {
                state.check_gstin(Some(gstin.as_str()), None)?;
                if !gstins.insert(gstin.as_str().to_owned()) {
                    return Err(StoreError::Conflict(UniqueKey::Gstin));
                }
            }
        }
        let add = |imported: ImportedVendor| {
            VendorId(state.add_vendor(imported.vendor, imported.is_active, imported.created_at))
        };
        Ok(vendors.into_iter().map(add).collect())
    }

    async fn import_invoices(&self, invoices: Vec<ImportedInvoice>) -> StoreResult<Vec<InvoiceId>> {
        let mut state = self.write();
        // Check the whole batch before writing any of it, so a refused batch changes nothing.
        let taken = state.active_number_keys();
        let mut numbers: HashSet<String> = HashSet::new();
        for imported in &invoices {
            if !state.vendors.contains_key(&imported.invoice.vendor_id.get()) {
                return Err(StoreError::ParentInactive(Entity::Vendor));
            }
            if imported.is_active {
                let number_key = key(&imported.invoice.invoice_number);
                if taken.contains(&number_key) || !numbers.insert(number_key) {
                    return Err(StoreError::Conflict(UniqueKey::InvoiceNumber));
                }
            }
        }
        let add = |imported: ImportedInvoice| {
            InvoiceId(state.add_invoice(imported.invoice, imported.is_active, imported.created_at))
        };
        Ok(invoices.into_iter().map(add).collect())
    }

    async fn import_transactions(&self, transactions: Vec<ImportedTransaction>) -> StoreResult<Vec<TransactionId>> {
        let mut state = self.write();
        if transactions.iter().any(|imported| !state.invoices.contains_key(&imported.transaction.invoice_id.get())) {
            return Err(StoreError::ParentInactive(Entity::Invoice));
        }
        let mut added: HashMap<i64, Decimal> = HashMap::new();
        for imported in transactions.iter().filter(|imported| imported.is_active) {
            *added.entry(imported.transaction.invoice_id.get()).or_default() += imported.transaction.amount.get();
        }
        for (invoice_id, amount) in &added {
            let paid = state.invoices.get(invoice_id).map(|invoice| invoice.paid).unwrap_or_default();
            ledger::check_paid_total(paid + amount)?;
        }
        // D30: each active reference of the batch is held by no stored payment and by no earlier
        // payment of the batch, which would get the id the store numbers it with.
        let first_id = state.peek_next("transaction");
        let with_references =
            transactions.iter().any(|imported| imported.is_active && imported.transaction.reference.is_some());
        let held = if with_references { state.reference_holders() } else { HashMap::new() };
        let mut keys = HashMap::new();
        for (index, imported) in transactions.iter().enumerate().filter(|(_, imported)| imported.is_active) {
            let payment = &imported.transaction;
            let Some(reference) = &payment.reference else { continue };
            if let Some(holders) = held.get(&(payment.transaction_type, reference.key().to_owned())) {
                references::check(holders, None)?;
            }
            let id = first_id + index as i64;
            if let Some(existing) = keys.insert((payment.transaction_type, reference.key().to_owned()), id) {
                keys.insert((payment.transaction_type, reference.key().to_owned()), existing);
                return Err(StoreError::Conflict(UniqueKey::PaymentReference { existing: TransactionId(existing) }));
            }
        }
        let add = |imported: ImportedTransaction| {
            TransactionId(state.add_transaction(imported.transaction, imported.is_active, imported.created_at, None))
        };
        let ids = transactions.into_iter().map(add).collect();
        // Bulk loads announce nothing (D47 covers the books' writes, not the demo's seeding).
        state.paid_now.clear();
        Ok(ids)
    }
}

/// The active vendors, as imports judge them (D45).
fn active_vendors(state: &State) -> Vec<StoredVendor> {
    let stored = |(id, row): (&i64, &crate::VendorRow)| StoredVendor {
        id: VendorId(*id),
        fields: NewVendor {
            name: row.name.clone(),
            vendor_type: row.vendor_type,
            address: row.address.clone(),
            phone: row.phone.clone(),
            email: row.email.clone(),
            drug_license_number1: row.drug_license_number1.clone(),
            drug_license_number2: row.drug_license_number2.clone(),
            additional_drug_license_numbers: Vec::new(),
            drug_license_valid_until: row.drug_license_valid_until,
            gstin: row.gstin.as_deref().and_then(|gstin| Gstin::parse(gstin).ok()),
        },
    };
    state.vendors.iter().filter(|(_, row)| row.is_active).map(stored).collect()
}

/// Ends an import of `row_count` rows as `plan` says: unless `dry_run`, each record is added
/// by `add`, which answers its id and the values written, and gets its `create` audit entry as a
/// record of `entity` (D22); the claim of `ctx` is completed with the summary (D23).
fn write_plan<T>(
    state: &mut State,
    ctx: &WriteContext,
    (dry_run, row_count): (bool, usize),
    plan: ImportPlan<T>,
    entity: Entity,
    mut add: impl FnMut(&mut State, T) -> (i64, String),
) -> ImportSummary {
    let summary = plan.summary(dry_run, row_count);
    if dry_run {
        return summary;
    }
    for (_, record) in plan.create {
        let (id, changes) = add(state, record);
        let mut entry = ctx.audit("create", entity, Some(id));
        entry.changes = Some(changes);
        state.audit(entry);
        // D47: one `created` event per record.
        state.announce(ctx, ctx.announcements(("create", entity, id), &[], []));
    }
    if let Some(ticket) = &ctx.idempotency {
        state.complete_claim(ticket, summary.to_claim_id());
    }
    summary
}

impl FileImportStore for MemoryStore {
    async fn import_invoice_rows(
        &self,
        rows: Vec<InvoiceRow>,
        ctx: WriteContext,
        dry_run: bool,
    ) -> StoreResult<ImportSummary> {
        let mut state = self.write();
        let row_count = rows.len();
        let keys = InvoiceKeys::of(&rows);
        let stored: Vec<StoredInvoice> = state
            .invoices
            .iter()
            .filter(|(_, row)| row.is_active && keys.numbers.contains(&row.number_key))
            .map(|(id, row)| StoredInvoice {
                id: InvoiceId(*id),
                vendor_id: VendorId(row.vendor_id),
                invoice_number: row.invoice_number.clone(),
                amount: row.amount,
                invoice_date: row.invoice_date,
                due_date: row.due_date,
            })
            .collect();
        let plan =
            imports::plan_invoices(rows, &active_vendors(&state), &stored, state.licence_policy(), &state.calendar)
                .map_err(StoreError::Rows)?;
        Ok(write_plan(&mut state, &ctx, (dry_run, row_count), plan, Entity::Invoice, |state, invoice| {
            let changes = invoice.audit_changes();
            (state.add_invoice(invoice, true, ctx.at), changes)
        }))
    }

    async fn import_vendor_rows(
        &self,
        rows: Vec<VendorRow>,
        ctx: WriteContext,
        dry_run: bool,
    ) -> StoreResult<ImportSummary> {
        let mut state = self.write();
        let row_count = rows.len();
        let plan = imports::plan_vendors(rows, &active_vendors(&state), &state.calendar).map_err(StoreError::Rows)?;
        Ok(write_plan(&mut state, &ctx, (dry_run, row_count), plan, Entity::Vendor, |state, vendor| {
            let changes = vendor.audit_changes();
            (state.add_vendor(vendor, true, ctx.at), changes)
        }))
    }
}
